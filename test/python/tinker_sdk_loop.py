"""A tinker-cookbook-style supervised loop and sampling with the official `tinker` SDK (pinned 0.24.1)
against `whale serve` (test/unit/tinker-sdk.test.ts). Token ids come from the caller (the embedded
vocabulary), so no tokenizer is fetched from the hub.
usage: python tinker_sdk_loop.py URL '{"prompt": [...], "completion": [...]}'  → one JSON line"""
import json
import sys

import tinker
from tinker import types

url, spec = sys.argv[1], json.loads(sys.argv[2])
prompt, completion = spec["prompt"], spec["completion"]
service = tinker.ServiceClient(base_url=url, api_key="tml-whale-local")
training = service.create_lora_training_client(base_model="embedded", rank=8)

full = prompt + completion
weights = [0.0] * (len(prompt) - 1) + [1.0 / len(completion)] * len(completion)
datum = types.Datum(
    model_input=types.ModelInput.from_ints(full[:-1]),
    loss_fn_inputs={"target_tokens": full[1:], "weights": weights},
)
losses = []
for step in range(int(spec.get("steps", 6))):
    fwd = training.forward_backward([datum], "cross_entropy").result()
    # the loss as the cookbook computes it: -Σ w·logprob from loss_fn_outputs
    logprobs = fwd.loss_fn_outputs[0]["logprobs"].tolist()
    losses.append(-sum(lp * w for lp, w in zip(logprobs, weights)))
    training.optim_step(types.AdamParams(learning_rate=float(spec.get("lr", 3e-3)))).result()

sampler = training.save_weights_and_get_sampling_client()
out = sampler.sample(
    prompt=types.ModelInput.from_ints(prompt),
    num_samples=1,
    sampling_params=types.SamplingParams(max_tokens=len(completion), temperature=0.0),
).result()
# a named checkpoint, sampled again by its path (what the SDK's deprecation note recommends)
named = training.save_weights_for_sampler(name="whale-sdk-named").result()
again = service.create_sampling_client(model_path=named.path).sample(
    prompt=types.ModelInput.from_ints(prompt),
    num_samples=1,
    sampling_params=types.SamplingParams(max_tokens=len(completion), temperature=0.0),
).result()
print(json.dumps({"losses": losses, "sampled": list(out.sequences[0].tokens), "named_path": named.path, "named_sampled": list(again.sequences[0].tokens)}))
