// The backend health model: which URLs a backend section names, the ok/unreachable state with its
// backoff, and the poller against a real HTTP server that goes away and comes back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  HealthPoller,
  backendRowDetail,
  describeHealth,
  healthTargets,
  nextDelayMs,
  nextHealth,
  type HealthState,
} from '../../src/extension/model/backendHealth.js';
import { until } from '../support/until.js';
import { describeBackend } from '../../src/extension/model/runsModel.js';

test('health targets: the sampler /models and the trainer /api/v1/healthz; nothing to probe for embedded or a broken section', () => {
  assert.deepEqual(healthTargets({ kind: 'embedded' }), []);
  assert.deepEqual(healthTargets(undefined), []);
  assert.deepEqual(healthTargets({ kind: 'openai-compatible', baseUrl: 'not a url' }), []);
  assert.deepEqual(healthTargets({ kind: 'openai-compatible', baseUrl: 'http://gpu:8000/v1/' }), [{ role: 'server', url: 'http://gpu:8000/v1/models' }]);
  assert.deepEqual(healthTargets({ kind: 'tinker', baseUrl: 'http://gpu:8001' }), [{ role: 'server', url: 'http://gpu:8001/api/v1/healthz' }]);
  assert.deepEqual(healthTargets({ kind: 'split', sampler: { baseUrl: 'http://gpu:8000/v1' }, trainer: { baseUrl: 'http://gpu:8001/api/v1' } }), [
    { role: 'sampler', url: 'http://gpu:8000/v1/models' },
    { role: 'trainer', url: 'http://gpu:8001/api/v1/healthz' },
  ]);
});

test('health state: unreachable keeps the time it first failed; the retry delay doubles per failure up to the cap; ok resets', () => {
  const timing = { okMs: 60_000, retryMs: 10_000, maxRetryMs: 300_000 };
  let s: HealthState = { status: 'unknown' };
  assert.equal(nextDelayMs(s, timing), 60_000);
  s = nextHealth(s, { ok: false, error: 'server http://x/models: ECONNREFUSED' }, 1000);
  assert.deepEqual(s, { status: 'unreachable', since: 1000, checkedAt: 1000, failures: 1, error: 'server http://x/models: ECONNREFUSED' });
  const delays = [nextDelayMs(s, timing)];
  for (let i = 0; i < 6; i++) {
    s = nextHealth(s, { ok: false, error: 'e' }, 2000 + i);
    delays.push(nextDelayMs(s, timing));
  }
  assert.deepEqual(delays, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  assert.equal(s.status === 'unreachable' && s.since, 1000);
  assert.match(describeHealth('split', s).text, /^split: unreachable since 00:00:01 UTC \(e; 7 failed checks\)$/);
  assert.equal(describeHealth('split', s).mark, '$(debug-disconnect)');
  s = nextHealth(s, { ok: true }, 9000);
  assert.deepEqual(s, { status: 'ok', checkedAt: 9000 });
  assert.equal(nextDelayMs(s, timing), 60_000);
  assert.equal(describeHealth('tinker', s).mark, '$(pass)');
});

test('runs view backend row: the journaled capabilities, plus the configured backend health on runs of that kind', () => {
  const row = describeBackendLine();
  const down = {
    kind: 'split',
    targets: ['http://gpu:8000/v1/models'],
    ...describeHealth('split', { status: 'unreachable', since: 0, checkedAt: 0, failures: 2, error: 'sampler http://gpu:8000/v1/models: ECONNREFUSED' }),
  };
  assert.equal(backendRowDetail(row, down), `${row} · unreachable since 00:00:00 UTC (sampler http://gpu:8000/v1/models: ECONNREFUSED; 2 failed checks)`);
  assert.equal(backendRowDetail(row, { ...down, kind: 'tinker' }), row, 'another kind of backend is configured now: its health says nothing about this run');
  assert.equal(
    backendRowDetail('embedded · training full · token ids yes · logprobs yes', {
      kind: 'embedded',
      targets: [],
      text: 'embedded: in this process (nothing to probe)',
    }),
    'embedded · training full · token ids yes · logprobs yes',
  );
});

function describeBackendLine(): string {
  return describeBackend({ kind: 'split', capabilities: { update: 'lora', tokenIds: true, logprobs: true, loraLoading: true } })!;
}

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((r) => server.listen(port, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
}

test(
  'health poller: a real server that answers (even 404) is ok; closed, it is unreachable since then; back, it is ok again',
  { timeout: 120_000 },
  async () => {
    const handler = (_req: unknown, res: { writeHead(n: number): { end(): void } }) => res.writeHead(404).end();
    let server = createServer(handler);
    const port = await listen(server);
    const seen: HealthState[] = [];
    const poller = new HealthPoller(
      () => [{ role: 'server', url: `http://127.0.0.1:${port}/v1/models` }],
      (s) => seen.push(s),
      () => ({ okMs: 200, retryMs: 100, maxRetryMs: 400 }),
    );
    try {
      poller.start();
      await until('ok', () => (poller.current().status === 'ok' ? true : undefined));
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      const down = await until('unreachable twice', () => {
        const s = poller.current();
        return s.status === 'unreachable' && s.failures >= 2 ? s : undefined;
      });
      assert.match(down.error, new RegExp(`server http://127.0.0.1:${port}/v1/models: ECONNREFUSED`));
      const firstDown = seen.find((s) => s.status === 'unreachable');
      assert.equal(firstDown?.status === 'unreachable' && firstDown.since, down.since, 'since is the first failure');
      server = createServer(handler);
      await listen(server, port);
      await until('ok again', () => (poller.current().status === 'ok' ? true : undefined));
      assert.deepEqual([...new Set(seen.map((s) => s.status))], ['ok', 'unreachable']);
    } finally {
      poller.stop();
      server.close();
    }
  },
);
