import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

// 1 input token = 1,000 micros, 1 output token = 2,000 micros.
const PRICES = { inputPerMTokMicros: 1_000_000_000, outputPerMTokMicros: 2_000_000_000 };

let t: TestApp;

beforeAll(async () => {
  t = await startApp({
    overrides: {
      default_tier: 'metered',
      tiers: { metered: { rpm: 100_000, tpm: 100_000_000, concurrency: 100, models: ['*'] } },
      models: {
        'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0 },
        'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 100, price: { input: 1000, output: 2000 } },
        'priced-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 400, default_tokens: 400, max_output: 1000, price: { input: 1000, output: 2000 } },
      },
    },
  });
});
afterAll(() => t.close());

async function subscription(apiKey: string): Promise<{ status: number; body: Record<string, any>; headers: Headers }> {
  const res = await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } });
  return { status: res.status, body: await jsonOf(res), headers: res.headers };
}

async function expectLedgerConsistent(accountId: string): Promise<number> {
  await t.flushUsage();
  const balance = await t.store.balanceOf(accountId);
  expect(balance).toBeGreaterThanOrEqual(0);
  expect(await t.store.sumLedger(accountId)).toBe(balance);
  return balance;
}

describe('402 Payment Required', () => {
  it('an account with zero credits gets 402 with the spec message, even for a free model', async () => {
    const { apiKey } = await t.createAccount({ credits: 0 });
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(402);
    expect(await jsonOf(res)).toEqual({
      error: { message: 'Insufficient credits. Please top up your balance to continue.', code: 402, request_id: res.headers.get('x-request-id'), credits_available: 0 },
    });
    const err = await t.client(apiKey).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
  });

  it('spending down: every charge is exact, and the worst case that no longer fits gets 402', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 1 }); // 1,000,000 micros
    const client = t.client(apiKey);
    const costs: number[] = [];
    let refused: unknown;
    for (let i = 0; i < 200 && !refused; i++) {
      try {
        const c = await client.chat.completions.create({ model: 'priced-echo', max_tokens: 50, messages: [{ role: 'user', content: `spend ${i}` }] });
        costs.push(costMicros(PRICES, c.usage!.prompt_tokens, c.usage!.completion_tokens));
      } catch (err) {
        refused = err;
      }
    }
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect(costs.length).toBeGreaterThan(5);
    const balance = await expectLedgerConsistent(account.id);
    const spent = costs.reduce((a, b) => a + b, 0);
    expect(balance).toBe(1_000_000 - spent);
    const usage = await t.store.listUsage(account.id, { limit: 1000 });
    expect(usage.reduce((sum, u) => sum + u.costMicros, 0)).toBe(spent);
    expect(usage).toHaveLength(costs.length);
    // What is left cannot cover one more worst case (prompt + 50 output tokens).
    expect(balance).toBeLessThan(costMicros(PRICES, 20, 50));
  });
});

describe('GET /api/billing/subscription', () => {
  it('reports account, tier, balance, reserved credits and limits, and follows each charge', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 2.5 });
    const before = await subscription(apiKey);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({
      object: 'billing.subscription',
      account_id: account.id,
      tier: { name: 'metered', subscription_required: false },
      subscription: { status: 'not_required' },
      balance: { credits: 2.5, micros: 2_500_000 },
      reserved: { credits: 0, micros: 0 },
      rate_limits: { requests_per_minute: { limit: 100_000 }, tokens_per_minute: { limit: 100_000_000 }, concurrent_requests: { limit: 100, in_use: 0 } },
    });
    expect(before.headers.get('x-ratelimit-limit')).toBe('100000');

    const c = await t.client(apiKey).chat.completions.create({ model: 'priced-echo', messages: [{ role: 'user', content: 'charge me' }] });
    const cost = costMicros(PRICES, c.usage!.prompt_tokens, c.usage!.completion_tokens);
    const after = await subscription(apiKey);
    expect(after.body.balance.micros).toBe(2_500_000 - cost);
    expect(after.body.reserved.micros).toBe(0);
  });

  it('needs a valid key', async () => {
    const res = await fetch(`${t.origin}/api/billing/subscription`);
    expect(res.status).toBe(401);
  });

  it('sees a grant made outside the app (CLI, another instance)', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 1 });
    expect((await subscription(apiKey)).body.balance.micros).toBe(1_000_000);
    await t.store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 3_000_000, reason: 'top up' });
    await t.syncChanges();
    expect((await subscription(apiKey)).body.balance.micros).toBe(4_000_000);
  });
});

describe('streams', () => {
  it('a stream cut by the client is charged for the tokens generated, nothing more', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    const controller = new AbortController();
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'priced-lorem', stream: true, messages: [{ role: 'user', content: 'go on' }] }),
    });
    expect(res.headers.get('x-ratelimit-remaining')).toBeTruthy();
    const reader = res.body!.getReader();
    let received = '';
    while ((received.match(/"content":"[^"]/g) ?? []).length < 5) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended early: ${received}`);
      received += new TextDecoder().decode(value);
    }
    controller.abort();

    // The server notices the disconnect and settles; wait until the usage record is written.
    let records = await t.store.listUsage(account.id);
    for (let i = 0; i < 100 && records.length === 0; i++) {
      await t.flushUsage();
      records = await t.store.listUsage(account.id);
      if (records.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record).toMatchObject({ status: 499, streamed: true, model: 'priced-lorem' });
    expect(record!.completionTokens).toBeGreaterThanOrEqual(5);
    expect(record!.completionTokens).toBeLessThan(400);
    expect(record!.costMicros).toBe(costMicros(PRICES, record!.promptTokens, record!.completionTokens));
    expect(await expectLedgerConsistent(account.id)).toBe(10_000_000 - record!.costMicros);
    expect((await subscription(apiKey)).body.reserved.micros).toBe(0);
  });

  it('a completed stream is charged exactly what its usage chunk reports', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    const stream = await t.client(apiKey).chat.completions.create({
      model: 'priced-echo',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count these tokens exactly' }],
    });
    let usage;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    const cost = costMicros(PRICES, usage!.prompt_tokens, usage!.completion_tokens);
    expect(await expectLedgerConsistent(account.id)).toBe(10_000_000 - cost);
    const [record] = await t.store.listUsage(account.id);
    expect(record).toMatchObject({ status: 200, streamed: true, finishReason: 'stop', costMicros: cost });
  });
});
