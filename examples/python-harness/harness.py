"""A WHALE harness in Python, standard library only.

Protocol (JSON lines): the runtime writes one `run` message on stdin; we write `ready`, any number
of `log`, then exactly one `result` (or `error`) on stdout, each carrying the `nonce` of the `run`
message (from the first frame that carries it on, a frame without it ends the rollout). Model and tool calls are HTTP requests
to the recording gateway named in `run.gateway`: over its unix socket when `socketPath` is given
(the only way out of the sandbox's network namespace), else over TCP at `baseUrl`.
Nothing but protocol lines may go to stdout; diagnostics go to stderr.
"""
import http.client
import json
import re
import socket
import sys
import urllib.parse

PROTOCOL = 1


# This rollout's nonce, from the `run` message: echoed in every frame, so that a line a child process
# writes on the stdout it inherited (it never saw the nonce) cannot pass for ours.
NONCE = None


def send(message):
    if NONCE is not None:
        message = dict(message, nonce=NONCE)
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a unix socket: http.client with the connect step replaced."""

    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


class GatewayError(Exception):
    pass


class Gateway:
    def __init__(self, info):
        self.info = info

    def post(self, url, body):
        parsed = urllib.parse.urlparse(url)
        if self.info.get("socketPath"):
            conn = UnixHTTPConnection(self.info["socketPath"])
        else:
            conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        try:
            payload = json.dumps(body)
            headers = {"content-type": "application/json", "authorization": "Bearer " + self.info["token"]}
            conn.request("POST", parsed.path, body=payload, headers=headers)
            res = conn.getresponse()
            data = json.loads(res.read().decode("utf-8"))
        finally:
            conn.close()
        if res.status >= 400:
            raise GatewayError(data.get("error", {}).get("message", str(data)))
        return data

    def chat(self, messages, **opts):
        data = self.post(self.info["baseUrl"] + "/chat/completions", dict(messages=messages, **opts))
        return data["choices"][0]["message"]["content"]

    def tool(self, name, args):
        return self.post(self.info["toolsUrl"] + "/" + urllib.parse.quote(name), args)["observation"]


ACTION = re.compile(r"\b(search|answer)\s+([^\s.,:?]+)")


def parse_action(text):
    m = ACTION.search(text)
    return (m.group(1), m.group(2)) if m else None


def run(task, knobs, prompts, limits, gw, log):
    max_searches = int(knobs.get("maxSearches", 2))
    topk = int(knobs.get("topk", 3))
    messages = []
    if prompts.get("system", "").strip():
        messages.append({"role": "system", "content": prompts["system"]})
    messages.append({"role": "user", "content": prompts.get("user", "{question}").replace("{question}", task["question"])})
    searches = 0
    for _turn in range(limits["maxTurns"]):
        opts = {}
        if limits.get("maxTokensPerCall"):
            opts["max_tokens"] = limits["maxTokensPerCall"]
        text = gw.chat(messages, **opts)
        messages.append({"role": "assistant", "content": text})
        action = parse_action(text)
        if action is None:
            log("unparsable action", {"text": text})
            messages.append({"role": "user", "content": "error : write search and a name , or answer and a value ."})
            continue
        kind, arg = action
        if kind == "answer":
            return arg
        if searches >= max_searches:
            messages.append({"role": "user", "content": "error : no search left . answer now ."})
            continue
        searches += 1
        observation = gw.tool("search", {"query": arg, "k": topk})
        log("searched", {"query": arg})
        messages.append({"role": "tool", "content": observation})
    return None


def main():
    line = sys.stdin.readline()
    try:
        msg = json.loads(line)
        assert msg.get("type") == "run", "expected a run message"
    except Exception as e:  # a broken runtime message: say so on the protocol
        send({"type": "error", "message": "bad run message: %s" % e})
        return 1
    global NONCE
    NONCE = msg.get("nonce")
    send({"type": "ready", "protocol": PROTOCOL, "runtime": "python %d.%d" % sys.version_info[:2]})
    gw = Gateway(msg["gateway"])

    def log(message, data=None):
        send({"type": "log", "message": message, "data": data})

    try:
        answer = run(msg["task"], msg["knobs"], msg["prompts"], msg["limits"], gw, log)
    except Exception as e:
        send({"type": "error", "message": "%s: %s" % (type(e).__name__, e)})
        return 1
    send({"type": "result", "answer": answer})
    return 0


if __name__ == "__main__":
    sys.exit(main())
