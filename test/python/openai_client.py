"""The official `openai` Python client against `whale serve` (test/unit/tinker-sdk.test.ts): chat with
WHALE's token-id extension and logprobs, and the refusals of what the server cannot do.
usage: python openai_client.py BASE_URL → one JSON line"""
import json
import sys

import openai

client = openai.OpenAI(base_url=sys.argv[1], api_key="none", max_retries=0)
msgs = [{"role": "user", "content": "hello"}]
r = client.chat.completions.create(model="current", messages=msgs, max_tokens=4, logprobs=True, extra_body={"return_token_ids": True})
c = r.choices[0]
out = {"token_ids": c.model_extra.get("token_ids"), "logprobs": [t.logprob for t in c.logprobs.content], "refused": {}}
for name, extra in {
    "top_logprobs": {"logprobs": True, "top_logprobs": 2},
    "tools": {"tools": [{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {}}}}]},
    "n": {"n": 2},
    "stream": {"stream": True},
}.items():
    try:
        client.chat.completions.create(model="current", messages=msgs, max_tokens=4, **extra)
        out["refused"][name] = None
    except openai.BadRequestError as e:
        out["refused"][name] = {"status": e.status_code, "param": e.param, "code": e.code}
print(json.dumps(out))
