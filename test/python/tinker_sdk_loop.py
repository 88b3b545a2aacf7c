"""A tinker-cookbook-style supervised loop and sampling with the official `tinker` SDK (pinned: 0.24.1,
the last JSON one, and 0.38.0, which sends forward_backward as protobuf and reads sample and
forward_backward results as protobuf) against `whale serve` (test/unit/tinker-sdk.test.ts). Token ids
come from the caller (the embedded vocabulary); `get_tokenizer()` then loads the tokenizer folder the
server reports, offline (HF_HUB_OFFLINE=1), and encodes the caller's texts.
usage: python tinker_sdk_loop.py URL '{"prompt": [...], "completion": [...], "texts": [...]}'  → one JSON line"""
import json
import sys

import tinker
from tinker import types

url, spec = sys.argv[1], json.loads(sys.argv[2])


def ready(x):
    """0.38 hands back futures of clients (using them directly is deprecated); 0.24.1 the clients."""
    return x.result() if type(x).__name__.startswith("Backcompat") else x


prompt, completion = spec["prompt"], spec["completion"]
service = tinker.ServiceClient(base_url=url, api_key="tml-whale-local")
training = ready(service.create_lora_training_client(base_model="embedded", rank=8))

full = prompt + completion
weights = [0.0] * (len(prompt) - 1) + [1.0 / len(completion)] * len(completion)
datum = types.Datum(
    model_input=types.ModelInput.from_ints(full[:-1]),
    loss_fn_inputs={"target_tokens": full[1:], "weights": weights},
)
# forward() only reads: the same loss before and after, nothing accumulated into the first step
before = training.forward([datum], "cross_entropy").result().loss_fn_outputs[0]["logprobs"].tolist()
losses = []
for step in range(int(spec.get("steps", 6))):
    fwd = training.forward_backward([datum], "cross_entropy").result()
    # the loss as the cookbook computes it: -Σ w·logprob from loss_fn_outputs
    logprobs = fwd.loss_fn_outputs[0]["logprobs"].tolist()
    losses.append(-sum(lp * w for lp, w in zip(logprobs, weights)))
    training.optim_step(types.AdamParams(learning_rate=float(spec.get("lr", 3e-3)))).result()

sampler = ready(training.save_weights_and_get_sampling_client())
out = sampler.sample(
    prompt=types.ModelInput.from_ints(prompt),
    num_samples=1,
    sampling_params=types.SamplingParams(max_tokens=len(completion), temperature=0.0),
).result()
# a named checkpoint, sampled again by its path (what the SDK's deprecation note recommends)
named = training.save_weights_for_sampler(name="whale-sdk-named").result()
again = ready(service.create_sampling_client(model_path=named.path)).sample(
    prompt=types.ModelInput.from_ints(prompt),
    num_samples=1,
    sampling_params=types.SamplingParams(max_tokens=len(completion), temperature=0.0),
).result()
tokenizer = training.get_tokenizer()
texts = spec.get("texts", [])
encoded = [tokenizer.encode(t, add_special_tokens=False) for t in texts]
try:
    import jinja2  # noqa: F401  (apply_chat_template needs it; the 0.38.0 venv pins it)
    chat = [list(tokenizer.apply_chat_template([{"role": "user", "content": t}], add_generation_prompt=True, tokenize=True, return_dict=False)) for t in texts]
except ImportError:
    chat = None
print(json.dumps({"sdk": tinker.__version__, "forward_loss": -sum(lp * w for lp, w in zip(before, weights)), "tokenizer_id": training.get_info().model_data.tokenizer_id,
                  "encoded": encoded, "decoded": [tokenizer.decode(e) for e in encoded], "chat": chat, "losses": losses, "sampled": list(out.sequences[0].tokens), "named_path": named.path, "named_sampled": list(again.sequences[0].tokens)}))
