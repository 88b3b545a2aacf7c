// A real local Ray head: `whale backend launch --ray` uploads this project as the job's working_dir,
// the embedded backend starts as a Ray job, a weight phase trains against it over the Tinker
// protocol, and `whale backend stop` ends it. Skipped (with the reason) only where Ray is not
// installed: `pip install "ray[default]==2.60.0"` (set WHALE_RAY to the `ray` executable if it is not on PATH).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunStore } from '../../src/archive/runStore.js';
import { Journal } from '../../src/archive/journal.js';
import { tinyProject, whale, whaleAsync } from './serve-helpers.js';
import { CountingProxy } from '../support/countingProxy.js';

const ray = process.env.WHALE_RAY ?? 'ray';
const rayVersion = spawnSync(ray, ['--version'], { encoding: 'utf8' });
const skip = rayVersion.status === 0 ? false : `Ray is not installed here (${ray} --version failed): pip install "ray[default]==2.60.0", or set WHALE_RAY`;
const repo = fileURLToPath(new URL('../..', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

test('ray: the embedded backend runs as a Ray job on a local head, a weight phase trains against it, and it stops', { skip, timeout: 1_200_000 }, async () => {
  const [gcs, dash, port] = [await freePort(), await freePort(), await freePort()];
  const temp = mkdtempSync(join(tmpdir(), 'wr-'));
  const env = { ...process.env, RAY_USAGE_STATS_ENABLED: '0' };
  const head = spawnSync(
    ray,
    [
      'start',
      '--head',
      '--node-ip-address=127.0.0.1',
      `--port=${gcs}`,
      '--dashboard-host=127.0.0.1',
      `--dashboard-port=${dash}`,
      '--num-cpus=2',
      '--num-gpus=0',
      '--include-dashboard=true',
      '--disable-usage-stats',
      `--temp-dir=${temp}`,
    ],
    { encoding: 'utf8', env, timeout: 300_000 },
  );
  assert.equal(head.status, 0, head.stderr);
  const dashboard = `http://127.0.0.1:${dash}`;
  let job: string | undefined;
  try {
    const launched = whale(
      ['backend', 'launch', '--ray', dashboard, '--template', 'embedded', '--port', String(port), '--node-modules', join(repo, 'node_modules')],
      repo,
    );
    assert.equal(launched.code, 0, launched.stderr);
    assert.match(launched.stderr, /submitted Ray job whale-embedded-\S+ \(working_dir gcs:\/\/_ray_pkg_[0-9a-f]+\.zip\)/);
    const out = JSON.parse(launched.stdout.trim().split('\n').at(-1)!) as { job: string; backend: Record<string, unknown> };
    job = out.job;
    assert.deepEqual(out.backend, { kind: 'tinker', baseUrl: `http://127.0.0.1:${port}`, baseModel: 'embedded', tokenizer: 'embedded' });

    const dir = tinyProject(out.backend, { method: 'weight-only', schedule: { epochs: 0.375, iterations: 2, cycles: 1 } });
    const r = await whaleAsync(['run'], dir);
    assert.equal(r.code, 0, r.stderr);
    const runs = new RunStore(join(dir, '.whale'));
    const j = new Journal(runs.journalFile(runs.current()!)).all();
    const steps = j.filter((e) => e.type === 'weight_step');
    assert.equal(steps.length, 2);
    assert.ok(
      steps.some((s) => s.trained && String(s.versionAfter).startsWith('tinker://')),
      'a step trained on the Ray-hosted backend',
    );

    const logs = whale(['backend', 'logs', '--ray', dashboard, '--job', job], repo);
    assert.match(logs.stdout, /whale serve: embedded policy/);
    // Behind a proxy (HTTP_PROXY/NO_PROXY as the rest of the engine honours them): the dashboard named
    // by a host only the proxy resolves; status (GET) and stop (POST, which the dashboard refuses from
    // anything that looks like a browser) both pass through it. With NO_PROXY naming the host the
    // client goes direct, the name does not resolve, and the proxy sees nothing more.
    // whaleAsync: the proxy lives in this process, so the event loop must keep running meanwhile.
    const proxy = await new CountingProxy().start();
    const proxied = `http://ray.whale.test:${dash}`;
    try {
      const viaProxy = await whaleAsync(['backend', 'status', '--ray', proxied, '--job', job], repo, { HTTP_PROXY: proxy.url, NO_PROXY: '' });
      assert.equal(viaProxy.code, 0, viaProxy.stderr);
      assert.equal((JSON.parse(viaProxy.stdout) as { status: string }).status, 'RUNNING');
      assert.ok(
        proxy.seen.some((s) => s.target === `ray.whale.test:${dash}` || s.target.startsWith(`${proxied}/`)),
        JSON.stringify(proxy.seen),
      );
      const seen = proxy.seen.length;
      const direct = await whaleAsync(['backend', 'status', '--ray', proxied, '--job', job], repo, { HTTP_PROXY: proxy.url, NO_PROXY: 'ray.whale.test' });
      assert.notEqual(direct.code, 0, 'ray.whale.test does not resolve without the proxy');
      assert.equal(proxy.seen.length, seen, 'a NO_PROXY host is not proxied');
      const stopped = await whaleAsync(['backend', 'stop', '--ray', proxied, '--job', job], repo, { HTTP_PROXY: proxy.url, NO_PROXY: '' });
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.ok(proxy.seen.length > seen, 'stop went through the proxy');
    } finally {
      await proxy.close();
    }
    let status = '';
    for (let i = 0; i < 60 && status !== 'STOPPED'; i++) {
      status = (JSON.parse(whale(['backend', 'status', '--ray', dashboard, '--job', job], repo).stdout) as { status: string }).status;
      if (status !== 'STOPPED') await new Promise((res) => setTimeout(res, 1000));
    }
    assert.equal(status, 'STOPPED');
    job = undefined;
  } finally {
    if (job) whale(['backend', 'stop', '--ray', dashboard, '--job', job], repo);
    // Stops the head this test started (its processes live under its own temp dir).
    spawnSync(ray, ['stop', '--force'], { env, timeout: 120_000 });
  }
});
