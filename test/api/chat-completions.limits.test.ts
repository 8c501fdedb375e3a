import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startApp({
    overrides: {
      tiers: {
        free: { rpm: 1000, tpm: 1_000_000, concurrency: 10, models: ['demo-*'] },
        tiny: { rpm: 3, tpm: 1_000_000, concurrency: 10, models: ['*'] },
        // Room for all 61 at once: under load some answers take a turn, and this is about rpm.
        quick: { rpm: 60, tpm: 1_000_000, concurrency: 100, models: ['*'] },
        narrow: { rpm: 1000, tpm: 60, concurrency: 10, models: ['*'] },
        single: { rpm: 1000, tpm: 1_000_000, concurrency: 1, models: ['*'] },
        paid: { rpm: 1000, tpm: 1_000_000, concurrency: 10, models: ['*'], subscription: true },
      },
      models: {
        'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0 },
        'demo-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 50 },
        'premium-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0 },
      },
    },
  });
});
afterAll(() => t.close());

function chat(apiKey: string, body: object = { model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] }): Promise<Response> {
  return fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('requests per minute', () => {
  it('every authenticated response carries X-RateLimit-*; the request over the limit gets 429 with all of them', async () => {
    const { apiKey } = await t.createAccount({ tier: 'tiny' });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await chat(apiKey);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      remaining.push(res.headers.get('x-ratelimit-remaining')!);
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const res = await chat(apiKey);
    expect(res.status).toBe(429);
    const body = await jsonOf(res);
    expect(body.error).toEqual({ message: 'Rate limit exceeded', code: 429, request_id: res.headers.get('x-request-id') });
    expect(Number.isInteger(body.retry_after)).toBe(true);
    expect(body.retry_after).toBeGreaterThanOrEqual(1);
    expect(body.retry_after).toBeLessThanOrEqual(20);
    expect(res.headers.get('retry-after')).toBe(String(body.retry_after));
    expect(res.headers.get('x-ratelimit-limit')).toBe('3');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Math.floor(Date.now() / 1000));
  });

  it('models requests count too and carry the headers', async () => {
    const { apiKey } = await t.createAccount({ tier: 'tiny' });
    const res = await fetch(`${t.baseURL}/models`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('the openai client raises RateLimitError, and a retry after retry_after seconds passes', async () => {
    const { apiKey } = await t.createAccount({ tier: 'quick' });
    const client = t.client(apiKey);
    const statuses = await Promise.all(Array.from({ length: 61 }, () => chat(apiKey).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200), JSON.stringify(statuses)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);

    const err = await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const retryAfterSec = Number((err as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after'));
    expect(retryAfterSec).toBe(1);
    // Waiting as a client is told to is the behaviour under test here.
    await new Promise((resolve) => setTimeout(resolve, retryAfterSec * 1000));
    const ok = await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'again' }] });
    expect(ok.choices[0]!.message.content).toBe('again');
  });

  it('a sliding limit: no burst of twice the limit across a window boundary', async () => {
    const { apiKey } = await t.createAccount({ tier: 'tiny' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await chat(apiKey)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });
});

describe('tokens per minute and concurrency', () => {
  it('a prompt that does not fit the tokens per minute gets 429', async () => {
    const { apiKey } = await t.createAccount({ tier: 'narrow' });
    const long = 'word '.repeat(100);
    const res = await chat(apiKey, { model: 'demo-echo', messages: [{ role: 'user', content: long }] });
    expect(res.status).toBe(429);
    expect((await jsonOf(res)).retry_after).toBeGreaterThanOrEqual(1);
  });

  it('the output counts against tokens per minute once known', async () => {
    const { apiKey } = await t.createAccount({ tier: 'narrow' });
    const first = await chat(apiKey, { model: 'demo-echo', messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen' }] });
    expect(first.status).toBe(200);
    const second = await chat(apiKey, { model: 'demo-echo', messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen' }] });
    expect(second.status).toBe(429);
  });

  it('requests refused for credits give their prompt tokens back', async () => {
    const { account, apiKey } = await t.createAccount({ tier: 'narrow', credits: 0 });
    const body = { model: 'demo-echo', messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten' }] };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await chat(apiKey, body)).status);
    expect(statuses).toEqual([402, 402, 402, 402, 402, 402]);
    await t.store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000_000, reason: 'top up' });
    await t.syncChanges();
    expect((await chat(apiKey, body)).status).toBe(200);
  });

  it('a second request while the tier allows one at a time gets 429, and passes once the first ends', async () => {
    const { apiKey } = await t.createAccount({ tier: 'single' });
    const controller = new AbortController();
    const running = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-lorem', stream: true, messages: [{ role: 'user', content: 'slow' }] }),
    });
    const reader = running.body!.getReader();
    await reader.read();
    const second = await chat(apiKey);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    controller.abort();
    await reader.read().catch(() => undefined);

    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await chat(apiKey)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(200);
  });
});

describe('403 Forbidden', () => {
  const FORBIDDEN = 'You do not have permission to access this resource.';

  it('a model outside the tier', async () => {
    const { apiKey } = await t.createAccount({ tier: 'free' });
    const res = await chat(apiKey, { model: 'premium-echo', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(403);
    expect((await jsonOf(res)).error).toMatchObject({ message: FORBIDDEN, code: 403, reason: 'model_not_in_tier' });
    expect((await chat(apiKey)).status).toBe(200);
  });

  it('a tier that needs a subscription, without an active one', async () => {
    const { apiKey } = await t.createAccount({ tier: 'paid' });
    const res = await chat(apiKey);
    expect(res.status).toBe(403);
    expect((await jsonOf(res)).error).toMatchObject({ message: FORBIDDEN, code: 403, reason: 'subscription_inactive' });
    const err = await t.client(apiKey).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    // The billing endpoint still answers, so the customer can see why.
    const billing = await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(billing.status).toBe(200);
    expect((await jsonOf(billing)).subscription.status).toBe('inactive');
  });
});
