// `lmgate upstreams`: the running server's view of its upstream deployments, from /metrics.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { adminCall, adminKey } from '../api/admin-client.js';
import { refusingUpstreamUrl, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

let t: TestApp;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: {
        'llama-cli': {
          deployments: [
            { url: await refusingUpstreamUrl(), model: 'gone', weight: 1000, circuit_breaker: { failures: 1, cooldown_ms: 600_000 } },
            { url: upstream.url, model: 'served' },
          ],
        },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await upstream.close();
});

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  // The CLI finds the server where the config says it listens.
  const env = { LMGATE_PORT: new URL(t.origin).port, LMGATE_DATA_DIR: t.dataDir };
  const code = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, env);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

it('shows each deployment with its circuit state, outcomes and latency', async () => {
  const { apiKey } = await t.createAccount();
  for (let i = 0; i < 2; i++) await t.client(apiKey).chat.completions.create({ model: 'llama-cli', messages: [{ role: 'user', content: 'hi' }] });

  const json = await run('--json', 'upstreams');
  expect(json.stderr).toBe('');
  expect(json.code).toBe(0);
  const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
  expect(rows).toEqual([
    expect.objectContaining({ model: 'llama-cli', deployment: '0', state: 'open', ok: 0, failed: 1, in_flight: 0 }),
    expect.objectContaining({ model: 'llama-cli', deployment: '1', upstream: new URL(upstream.url).origin, state: 'closed', ok: 2, failed: 0 }),
  ]);
  expect(rows[1]!.mean_first_byte_ms).toBeGreaterThan(0);

  const table = await run('upstreams');
  expect(table.code).toBe(0);
  expect(table.stdout.split('\n')[0]).toMatch(/^model\s+deployment\s+upstream\s+state\s+in_flight\s+ok/);
  expect(table.stdout).toMatch(/llama-cli\s+0\s+http:\/\/127\.0\.0\.1:\d+\s+open/);
});

it("the admin API's /upstreams answers the same rows", async () => {
  const cli = JSON.parse((await run('--json', 'upstreams')).stdout) as Record<string, unknown>[];
  const answer = await adminCall(t, { bearer: await adminKey(t, ['read']) }, 'GET', '/upstreams');
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ deployments: cli });
  expect(cli).toHaveLength(2);
});

it('--url takes the server’s address as well as its /metrics', async () => {
  const byOrigin = await run('--json', 'upstreams', '--url', t.origin);
  expect(byOrigin.stderr).toBe('');
  const byMetrics = await run('--json', 'upstreams', '--url', `${t.origin}/metrics`);
  const rows = JSON.parse(byOrigin.stdout) as { model: string }[];
  expect(rows.map((row) => row.model)).toEqual(['llama-cli', 'llama-cli']);
  expect(JSON.parse(byMetrics.stdout)).toHaveLength(2);
});

it('says where it looked when no server answers', async () => {
  const result = await run('upstreams', '--url', 'http://127.0.0.1:1/metrics');
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('cannot read http://127.0.0.1:1/metrics');
});
