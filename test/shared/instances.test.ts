// Many instances as one: four lmgate instances in shared mode on one PostgreSQL and Redis,
// spoken to with the official client, round-robin.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';

const INSTANCES = 4;
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster(INSTANCES, {
    default_tier: 'roomy',
    tiers: {
      roomy: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 10_000, models: ['*'] },
      small: { rpm: 20, tpm: 1_000_000, concurrency: 100, models: ['*'] },
    },
    models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 100, output: 100 }, max_output: 16 } },
  });
}, 60_000);
afterAll(() => cluster?.close());

describe('credits across instances', () => {
  it('no overdraft: 2,000 concurrent spends over 4 instances against a balance for about a tenth of them', async () => {
    const spends = 2_000;
    const messages = [{ role: 'user' as const, content: 'spend' }];
    // The worst case of one request: its prompt and 16 output tokens, at 100 micro-credits a token.
    const probe = await cluster.createAccount({ micros: 1_000_000 });
    const { usage: probed } = await cluster.instances[0]!.client(probe.apiKey).chat.completions.create({ model: 'priced-echo', messages, max_tokens: 16 });
    const worstCase = (probed!.prompt_tokens + 16) * 100;
    const start = worstCase * (spends / 10);
    const { account, apiKey } = await cluster.createAccount({ micros: start });

    const clients = cluster.instances.map((instance) => instance.client(apiKey));
    const statuses = await Promise.all(
      Array.from({ length: spends }, (_, i) =>
        clients[i % INSTANCES]!.chat.completions.create({ model: 'priced-echo', messages, max_tokens: 16 }).then(
          () => 200,
          (err: unknown) => (err instanceof OpenAI.APIError ? (err.status ?? 0) : Promise.reject(err)),
        ),
      ),
    );
    const served = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    expect(served).toBeGreaterThan(0);

    await cluster.flushUsage();
    const usage = await cluster.store.listUsage(account.id, { limit: 100_000 });
    expect(usage).toHaveLength(served);
    const charged = usage.reduce((sum, row) => sum + row.costMicros, 0);
    const balance = await cluster.store.balanceOf(account.id);
    expect(balance).toBe(start - charged);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(await cluster.store.sumLedger(account.id)).toBe(balance);
    const ledger = await cluster.store.listLedger(account.id, { limit: 100_000 });
    expect(ledger.filter((entry) => entry.reason?.includes('capped'))).toEqual([]);
    console.log(`no overdraft: ${spends} spends over ${INSTANCES} instances, ${served} served, ${spends - served} refused (402); balance ${start} → ${balance} micro-credits`);
  }, 120_000);
});

describe('limits across instances', () => {
  it('requests per minute is one limit, however the requests are spread; every refusal is the spec 429', async () => {
    const { apiKey } = await cluster.createAccount({ micros: 1_000_000_000, tier: 'small' });
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        fetch(`${cluster.instances[i % INSTANCES]!.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'priced-echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
        }),
      ),
    );
    const accepted = responses.filter((r) => r.status === 200).length;
    expect(accepted).toBe(20);
    for (const response of responses.filter((r) => r.status !== 200)) {
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(response.headers.get('x-ratelimit-limit')).toBe('20');
      const body = (await response.json()) as { error: { message: string; code: number }; retry_after: number };
      expect(body.error).toMatchObject({ message: 'Rate limit exceeded', code: 429 });
      expect(body.retry_after).toBeGreaterThan(0);
    }
  });
});

describe('health, and an instance that loses Redis', () => {
  it('/healthz is alive; /readyz checks the store and Redis', async () => {
    const instance = cluster.instances[0]!;
    const health = await fetch(`${instance.origin}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${instance.origin}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok', redis: 'ok' } });
  });

  it('refuses metered requests with 503 and Retry-After at once, and is not ready, while Redis is unreachable', async () => {
    const { apiKey } = await cluster.createAccount({ micros: 1_000_000 });
    const instance = cluster.instances[INSTANCES - 1]!;
    const redis = (instance.app.admission as unknown as { state: { redis: { disconnect(): void; connect(): Promise<void> } } }).state.redis;
    redis.disconnect();
    try {
      const started = performance.now();
      const response = await fetch(`${instance.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'priced-echo', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('1');
      const body = (await response.json()) as { error: { code: number; message: string } };
      expect(body.error).toMatchObject({ code: 503, message: 'The service is briefly unavailable. Please try again shortly.' });
      const ready = await fetch(`${instance.origin}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'unavailable', checks: { store: 'ok', redis: 'failing' } });
    } finally {
      await redis.connect();
    }
    const answer = await instance.client(apiKey).chat.completions.create({ model: 'priced-echo', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]!.message.content).toBe('hi');
  });
});
