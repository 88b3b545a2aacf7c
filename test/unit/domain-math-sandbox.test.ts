/**
 * `whale sandbox serve`'s service: SandboxFusion's POST /run_code running Python under the harness
 * sandbox's confinement (bubblewrap, prlimit, watchdogs), through real HTTP and the domain's client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InfraError } from '../../src/core/errors.js';
import { sandboxCapabilities } from '../../src/harness/sandbox.js';
import { codeInterpreterTool, runCode, type RunCodeResponse } from '../../src/domains/math/codeInterpreter.js';
import { codeSandboxMode, startCodeSandbox, type CodeSandboxServer } from '../../src/domains/math/sandboxService.js';
import type { Task } from '../../src/domains/types.js';

const caps = sandboxCapabilities();
const requireBwrap = process.env.WHALE_REQUIRE_BWRAP === '1';
const noBwrap = !caps.bwrap && !requireBwrap && 'bubblewrap cannot build a mount namespace here';

async function post(url: string, body: unknown): Promise<{ status: number; body: RunCodeResponse & { detail?: string } }> {
  const r = await fetch(`${url}/run_code`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as RunCodeResponse & { detail?: string } };
}

describe('code sandbox service (SandboxFusion API)', () => {
  let sb: CodeSandboxServer;
  before(async () => {
    sb = await startCodeSandbox({ filesystem: requireBwrap ? 'confined' : 'auto', concurrency: 2 });
  });
  after(async () => {
    await sb.close();
  });

  it('is confined by bubblewrap where CI requires it (WHALE_REQUIRE_BWRAP=1)', { skip: !requireBwrap && 'WHALE_REQUIRE_BWRAP is not set' }, () => {
    assert.equal(sb.mode.filesystem, 'confined');
    assert.equal(sb.mode.network, 'namespace');
  });

  it('runs code: stdout, stdin, Success / Finished / return_code 0, execution_time', async () => {
    const r = await post(sb.url, {
      code: 'import sys\nprint(sum(range(101)))\nprint(sys.stdin.read().strip()[::-1])',
      language: 'python',
      run_timeout: 5,
      stdin: 'abc',
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'Success');
    assert.equal(r.body.run_result?.status, 'Finished');
    assert.equal(r.body.run_result?.return_code, 0);
    assert.equal(r.body.run_result?.stdout, '5050\ncba\n');
    assert.equal(r.body.run_result?.stderr, '');
    assert.ok((r.body.run_result?.execution_time ?? -1) > 0);
  });

  it('an exception: Failed, Finished, return_code 1, the traceback on stderr', async () => {
    const r = await post(sb.url, { code: 'print("before")\n1/0', language: 'python', run_timeout: 5 });
    assert.equal(r.body.status, 'Failed');
    assert.equal(r.body.run_result?.status, 'Finished');
    assert.equal(r.body.run_result?.return_code, 1);
    assert.equal(r.body.run_result?.stdout, 'before\n');
    assert.match(r.body.run_result?.stderr ?? '', /ZeroDivisionError/);
  });

  it('an endless loop: TimeLimitExceeded at run_timeout, the process killed', async () => {
    const t0 = Date.now();
    const r = await post(sb.url, { code: 'while True:\n    pass', language: 'python', run_timeout: 1 });
    assert.equal(r.body.status, 'Failed');
    assert.equal(r.body.run_result?.status, 'TimeLimitExceeded');
    assert.ok(Date.now() - t0 < 6000, `took ${Date.now() - t0} ms`);
  });

  it('a sleeping run is stopped at the wall-clock limit too', async () => {
    const r = await post(sb.url, { code: 'import time\ntime.sleep(60)', language: 'python', run_timeout: 1 });
    assert.equal(r.body.run_result?.status, 'TimeLimitExceeded');
  });

  it('memory over memory_limit_MB fails (MemoryError under the data limit), and says so', async () => {
    const r = await post(sb.url, { code: 'x = bytearray(600 * 1024 * 1024)\nprint(len(x))', language: 'python', run_timeout: 5, memory_limit_MB: 128 });
    assert.equal(r.body.status, 'Failed');
    assert.notEqual(r.body.run_result?.return_code, 0);
    assert.equal(r.body.run_result?.stdout, '');
    assert.match(r.body.run_result?.stderr ?? '', /MemoryError|memory limit/);
  });

  it('output past the cap is cut and the run stopped', async () => {
    const small = await startCodeSandbox({ outputBytes: 10_000 });
    try {
      const r = await post(small.url, { code: 'while True:\n    print("x" * 1000)', language: 'python', run_timeout: 5 });
      assert.equal(r.body.status, 'Failed');
      assert.ok((r.body.run_result?.stdout ?? '').length <= 10_000);
      assert.match(r.body.run_result?.stderr ?? '', /output limit/);
    } finally {
      await small.close();
    }
  });

  it(
    'no network: a TCP connect to a listening loopback port fails and the server sees no connection',
    { skip: codeSandboxMode().network === 'open' && !requireBwrap && 'no network namespace here' },
    async () => {
      let connections = 0;
      const server: Server = createServer((_q, s) => s.end('secret'));
      server.on('connection', () => connections++);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const port = (server.address() as { port: number }).port;
      try {
        const r = await post(sb.url, {
          code: `import socket\ns = socket.create_connection(("127.0.0.1", ${port}), timeout=2)\nprint("connected")`,
          language: 'python',
          run_timeout: 5,
        });
        assert.equal(r.body.status, 'Failed');
        assert.doesNotMatch(r.body.run_result?.stdout ?? '', /connected/);
        assert.match(r.body.run_result?.stderr ?? '', /Error/);
        assert.equal(connections, 0);
      } finally {
        server.close();
      }
    },
  );

  it('cannot read a file outside (answers planted in the host temp folder, /etc/shadow); /tmp is private and writable', { skip: noBwrap }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'whale-answers-'));
    const secret = path.join(dir, 'answers.json');
    writeFileSync(secret, '{"answer": 42}');
    const r = await post(sb.url, { code: `print(open(${JSON.stringify(secret)}).read())`, language: 'python', run_timeout: 5 });
    assert.equal(r.body.status, 'Failed');
    assert.match(r.body.run_result?.stderr ?? '', /FileNotFoundError|PermissionError/);
    assert.doesNotMatch(r.body.run_result?.stdout ?? '', /42/);
    const shadow = await post(sb.url, { code: 'print(open("/etc/shadow").read())', language: 'python', run_timeout: 5 });
    assert.equal(shadow.body.status, 'Failed');
    const tmp = await post(sb.url, {
      code: 'open("/tmp/scratch", "w").write("ok")\nprint(open("/tmp/scratch").read())\nimport os\nprint(sorted(os.listdir("/tmp")) == ["scratch"] or sorted(os.listdir("/tmp")))',
      language: 'python',
      run_timeout: 5,
    });
    assert.equal(tmp.body.run_result?.stdout?.split('\n')[0], 'ok');
  });

  it('files are placed beside the code; a file name that leaves the folder is a SandboxError', async () => {
    const r = await post(sb.url, {
      code: 'print(open("data/in.txt").read())',
      language: 'python',
      files: { 'data/in.txt': Buffer.from('hello').toString('base64') },
    });
    assert.equal(r.body.run_result?.stdout, 'hello\n');
    const bad = await post(sb.url, { code: 'print(1)', language: 'python', files: { '../x': 'aGk=' } });
    assert.equal(bad.body.status, 'SandboxError');
  });

  it('bad requests: 422 for a missing code field, 404 for another route, SandboxError for another language', async () => {
    assert.equal((await post(sb.url, { language: 'python' })).status, 422);
    assert.equal((await fetch(`${sb.url}/nope`)).status, 404);
    assert.equal((await post(sb.url, { code: 'int main(){}', language: 'cpp' })).body.status, 'SandboxError');
  });

  it('the code_interpreter tool shows stdout, or stderr and the exit code, and a timeout', async () => {
    const tool = codeInterpreterTool({ url: sb.url, runTimeout: 1, memoryLimitMb: 256, maxOutputChars: 200 });
    const task = {} as Task;
    assert.equal(await tool.call({ code: 'print(6*7)' }, task), '42\n');
    assert.match(await tool.call({ code: 'raise KeyError("k")' }, task), /KeyError: 'k'\n\(exit code 1\)$/);
    assert.match(await tool.call({ code: 'while 1: pass' }, task), /TimeLimitExceeded/);
    assert.equal(await tool.call({ code: 'x = 1' }, task), '(no output: print() what you want to see)');
    assert.match(await tool.call({ code: 'print("y" * 5000)' }, task), /… \(4801 more characters\)$/);
    await assert.rejects(async () => tool.call({}, task), /needs \{"code"/);
  });
});

describe('code_interpreter against a service that is down or broken: InfraError (not scored)', () => {
  it('connection refused', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    await assert.rejects(
      runCode({ url: `http://127.0.0.1:${port}`, runTimeout: 1, memoryLimitMb: 64, maxOutputChars: 100 }, 'print(1)'),
      (e: unknown) => e instanceof InfraError && e.source === 'tool' && /unreachable/.test(e.message),
    );
  });

  it('HTTP 500, and a SandboxError answer', async () => {
    let mode: '500' | 'sandboxerror' = '500';
    const s = createServer((_q, res) => {
      if (mode === '500') {
        res.writeHead(500).end('internal');
      } else
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: 'SandboxError', message: 'no executor', run_result: null, files: {} }));
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(s.address() as { port: number }).port}`;
    try {
      const o = { url, runTimeout: 1, memoryLimitMb: 64, maxOutputChars: 100 };
      await assert.rejects(runCode(o, 'print(1)'), (e: unknown) => e instanceof InfraError && /HTTP 500/.test(e.message));
      mode = 'sandboxerror';
      await assert.rejects(runCode(o, 'print(1)'), (e: unknown) => e instanceof InfraError && /no executor/.test(e.message));
    } finally {
      s.close();
    }
  });
});

// SandboxFusion's own client (PyPI sandbox-fusion 0.3.7; .ci/run installs it in a venv and sets WHALE_MATH_PY).
const clientPython = process.env.WHALE_MATH_PY ?? path.join(homedir(), '.cache', 'whale-ci', 'math-py-1', 'bin', 'python');
describe(
  "SandboxFusion's own Python client against whale's service",
  { skip: !existsSync(clientPython) && 'sandbox-fusion client not installed (WHALE_MATH_PY)' },
  () => {
    it('parses every answer with its models: Success / Failed / TimeLimitExceeded, and raises on SandboxError', async () => {
      const sb = await startCodeSandbox();
      try {
        const script = fileURLToPath(new URL('../support/sandbox_fusion_client.py', import.meta.url));
        const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
          const c = spawn(clientPython, [script, sb.url]);
          let stdout = '';
          let stderr = '';
          c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          c.on('exit', (code) => resolve({ code, stdout, stderr }));
        });
        assert.equal(r.code, 0, r.stderr);
        const out = JSON.parse(r.stdout) as Record<
          string,
          { status: string; run_status: string; return_code: number; stdout: string; stderr_tail: string; summary: string }
        > & { cpp: string };
        assert.deepEqual(
          { ...out.hello, stderr_tail: undefined },
          { status: 'Success', run_status: 'Finished', return_code: 0, stdout: '42\n', stderr_tail: undefined, summary: 'ok' },
        );
        assert.equal(out.exception.status, 'Failed');
        assert.equal(out.exception.return_code, 1);
        assert.match(out.exception.stderr_tail, /ValueError: boom/);
        assert.equal(out.exception.summary, 'failed');
        assert.equal(out.timeout.run_status, 'TimeLimitExceeded');
        assert.equal(out.timeout.summary, 'timeout');
        assert.match(out.cpp, /Sandbox responded with error: language 'cpp' is not supported/);
      } finally {
        await sb.close();
      }
    });
  },
);
