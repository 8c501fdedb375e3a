// GET /metrics: Prometheus text with per-deployment health, latency and error counts,
// after real requests through the openai client; and who may read it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.js';
import { refusingUpstreamUrl, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

let t: TestApp;
let upstream: FakeUpstream;
let refusing: string;
const UPSTREAM_KEY = 'sk-upstream-metrics-secret-42';

beforeAll(async () => {
  upstream = await startFakeUpstream();
  refusing = await refusingUpstreamUrl();
  process.env.LMGATE_TEST_METRICS_UPSTREAM_KEY = UPSTREAM_KEY;
  t = await startApp({
    overrides: {
      server: { trust_proxy: true },
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: {
        'llama-metrics': {
          deployments: [
            { url: refusing, model: 'gone', weight: 1000, circuit_breaker: { failures: 1, cooldown_ms: 600_000 } },
            { url: upstream.url, model: 'served', api_key_env: 'LMGATE_TEST_METRICS_UPSTREAM_KEY' },
          ],
        },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await upstream.close();
  delete process.env.LMGATE_TEST_METRICS_UPSTREAM_KEY;
});

/** The value of one sample line, by metric name and exact label set. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf('}')).split(',');
    if (inside.length === wanted.length && wanted.every((pair) => inside.includes(pair))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** The value of a sample line without labels. */
function unlabelled(text: string, name: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('/metrics', () => {
  it('counts attempts by outcome, observes first-byte latency, and shows circuit state per deployment', async () => {
    const { apiKey } = await t.createAccount();
    const client = t.client(apiKey);
    for (let i = 0; i < 3; i++) {
      const completion = await client.chat.completions.create({ model: 'llama-metrics', messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.model).toBe('llama-metrics');
    }
    const res = await fetch(`${t.origin}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    const gone = { model: 'llama-metrics', deployment: '0', upstream: new URL(refusing).origin };
    const served = { model: 'llama-metrics', deployment: '1', upstream: new URL(upstream.url).origin };
    // The refusing deployment failed once, opened its circuit, and was skipped after that.
    expect(sample(text, 'lmgate_upstream_attempts_total', { ...gone, outcome: 'unreachable' })).toBe(1);
    expect(sample(text, 'lmgate_upstream_attempts_total', { ...served, outcome: 'ok' })).toBe(3);
    expect(sample(text, 'lmgate_upstream_healthy', gone)).toBe(0);
    expect(sample(text, 'lmgate_upstream_healthy', served)).toBe(1);
    expect(sample(text, 'lmgate_upstream_circuit_state', { ...gone, state: 'open' })).toBe(1);
    expect(sample(text, 'lmgate_upstream_circuit_state', { ...served, state: 'closed' })).toBe(1);
    expect(sample(text, 'lmgate_upstream_in_flight', served)).toBe(0);
    expect(sample(text, 'lmgate_upstream_first_byte_seconds_count', served)).toBe(3);
    expect(sample(text, 'lmgate_upstream_first_byte_seconds_sum', served)).toBeGreaterThan(0);
    // Buckets are cumulative: each at least the one below it, +Inf holding every answer.
    const buckets = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '+Inf'].map(
      (le) => sample(text, 'lmgate_upstream_first_byte_seconds_bucket', { ...served, le })!,
    );
    expect(buckets.at(-1)).toBe(3);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1]!);
    // Process metrics come along; the upstream's key never does.
    expect(text).toContain('lmgate_process_cpu_seconds_total');
    expect(text).not.toContain(UPSTREAM_KEY);
  });

  it('counts usage records written and times each batch', async () => {
    const scrape = async (): Promise<string> => (await fetch(`${t.origin}/metrics`)).text();
    await t.flushUsage();
    const before = await scrape();
    const { apiKey } = await t.createAccount();
    const client = t.client(apiKey);
    for (let i = 0; i < 4; i++) await client.chat.completions.create({ model: 'llama-metrics', messages: [{ role: 'user', content: `usage ${i}` }] });
    await t.flushUsage();
    const after = await scrape();
    const delta = (name: string): number => unlabelled(after, name)! - unlabelled(before, name)!;
    expect(delta('lmgate_usage_records_written_total')).toBe(4);
    expect(delta('lmgate_usage_write_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(delta('lmgate_usage_write_seconds_sum')).toBeGreaterThan(0);
    expect(unlabelled(after, 'lmgate_usage_queue_records')).toBe(0);
    // The write thread's own CPU, read from /proc on Linux.
    if (process.platform === 'linux') expect(unlabelled(after, 'lmgate_usage_write_thread_cpu_seconds_total')).toBeGreaterThanOrEqual(0);
  });

  it('refuses a client that is not on loopback', async () => {
    const res = await fetch(`${t.origin}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { reason: string } }).error.reason).toBe('metrics_not_allowed');
  });
});

describe('/metrics with a token', () => {
  let secured: TestApp;
  beforeAll(async () => {
    process.env.LMGATE_TEST_METRICS_TOKEN = 'scrape-token-0123456789';
    secured = await startApp({ overrides: { metrics: { token_env: 'LMGATE_TEST_METRICS_TOKEN' } } });
  });
  afterAll(async () => {
    await secured.close();
    delete process.env.LMGATE_TEST_METRICS_TOKEN;
  });

  it('answers only the bearer of the token, even on loopback', async () => {
    expect((await fetch(`${secured.origin}/metrics`)).status).toBe(403);
    expect((await fetch(`${secured.origin}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(403);
    const res = await fetch(`${secured.origin}/metrics`, { headers: { authorization: 'Bearer scrape-token-0123456789' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('lmgate_process_cpu_seconds_total');
  });
});

describe('usage queue gauge', () => {
  it('reads the records waiting for the store when scraped', async () => {
    const metrics = new Metrics();
    let waiting = 7;
    metrics.watchUsageQueue(() => waiting);
    expect(unlabelled(await metrics.registry.metrics(), 'lmgate_usage_queue_records')).toBe(7);
    waiting = 0;
    expect(unlabelled(await metrics.registry.metrics(), 'lmgate_usage_queue_records')).toBe(0);
  });
});
