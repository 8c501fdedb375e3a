// The refusals of /v1/completions, /v1/responses and /v1/embeddings, each in the spec's
// unified body (and OpenAI's 401 shape for a wrong key), none of them charged; and a
// client that leaves a stream mid-way aborts the upstream and pays for what it got.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { jsonOf } from '../helpers/json.js';
import { readWords, settledUsage } from '../helpers/mid-stream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

let t: TestApp;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  t = await startApp({
    overrides: {
      tiers: {
        free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['demo-*', 'up-*'] },
        once: { rpm: 1, tpm: 10_000_000, concurrency: 100, models: ['*'] },
      },
      models: {
        'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 1, output: 1 } },
        'demo-embed': { backend: 'demo', kind: 'embedding', price: { input: 1, output: 0 } },
        'premium-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0 },
        'premium-embed': { backend: 'demo', kind: 'embedding' },
        'up-chat': { price: { input: 1, output: 1 }, deployments: [{ url: upstream.url, model: 'upstream-chat' }] },
        // Failed on purpose below; its breaker must not open meanwhile.
        'up-flaky': { deployments: [{ url: upstream.url, model: 'upstream-chat', circuit_breaker: { failures: 100 } }] },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await upstream.close();
});

interface EndpointCase {
  path: string;
  /** A valid body for `model`. */
  body(model: string): Record<string, unknown>;
  chatModel: boolean;
  /** A body with a bad field, and the field the 422 names. */
  invalid: { body: Record<string, unknown>; field: string };
}

const ENDPOINTS: EndpointCase[] = [
  { path: '/completions', body: (model) => ({ model, prompt: 'hi' }), chatModel: true, invalid: { body: { model: 'demo-echo', prompt: 'hi', temperature: 5 }, field: 'temperature' } },
  { path: '/responses', body: (model) => ({ model, input: 'hi' }), chatModel: true, invalid: { body: { model: 'demo-echo', input: 42 }, field: 'input' } },
  { path: '/embeddings', body: (model) => ({ model, input: 'hi' }), chatModel: false, invalid: { body: { model: 'demo-embed', input: 'hi', encoding_format: 'hex' }, field: 'encoding_format' } },
];

function post(path: string, body: unknown, apiKey?: string): Promise<Response> {
  return fetch(`${t.baseURL}${path}`, {
    method: 'POST',
    headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function expectUnified(res: Response, status: number, message: string): Promise<Record<string, unknown>> {
  expect(res.status).toBe(status);
  const body = (await jsonOf(res)) as Record<string, unknown> & { error: Record<string, unknown> };
  expect(body.error).toMatchObject({ message, code: status, request_id: res.headers.get('x-request-id') });
  return body;
}

describe.each(ENDPOINTS.map((each) => [each.path, each] as const))('POST /v1%s refuses', (_name, { path, body, chatModel, invalid }) => {
  const model = chatModel ? 'demo-echo' : 'demo-embed';

  it('401 without a key (unified) and with an unknown key (OpenAI’s shape)', async () => {
    await expectUnified(await post(path, body(model)), 401, 'Unauthenticated.');
    const res = await post(path, body(model), `sk-lmg-${'a'.repeat(43)}000000`);
    expect(res.status).toBe(401);
    expect((await jsonOf(res)).error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error' });
  });

  it('402 when the balance cannot cover the request, charging nothing', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 0 });
    await expectUnified(await post(path, body(model), apiKey), 402, 'Insufficient credits. Please top up your balance to continue.');
    await t.flushUsage();
    expect(await t.store.listUsage(account.id)).toHaveLength(0);
  });

  it('403 for a model outside the tier', async () => {
    const { apiKey } = await t.createAccount();
    const res = await post(path, body(chatModel ? 'premium-echo' : 'premium-embed'), apiKey);
    expect((await expectUnified(res, 403, 'You do not have permission to access this resource.')).error).toMatchObject({ reason: 'model_not_in_tier' });
  });

  it('404 for an unknown model', async () => {
    const { apiKey } = await t.createAccount();
    await expectUnified(await post(path, body('no-such-model'), apiKey), 404, 'Model not found.');
  });

  it('422 with one entry per invalid field', async () => {
    const { apiKey } = await t.createAccount();
    const res = await post(path, invalid.body, apiKey);
    const refused = await expectUnified(res, 422, 'Validation failed');
    expect(Object.keys(refused.errors as object)).toEqual([invalid.field]);
    const missing = await expectUnified(await post(path, {}, apiKey), 422, 'Validation failed');
    expect(Object.keys(missing.errors as object)).toContain('model');
  });

  it('429 past the requests per minute, with retry_after and the X-RateLimit headers; the client raises RateLimitError', async () => {
    const { apiKey } = await t.createAccount({ tier: 'once' });
    expect((await post(path, body(model), apiKey)).status).toBe(200);
    const res = await post(path, body(model), apiKey);
    const refused = await expectUnified(res, 429, 'Rate limit exceeded');
    expect(refused.retry_after).toBeGreaterThanOrEqual(1);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    const client = t.client(apiKey);
    const call = path === '/completions' ? client.completions.create({ model, prompt: 'hi' }) : path === '/responses' ? client.responses.create({ model, input: 'hi' }) : client.embeddings.create({ model, input: 'hi' });
    await expect(call).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  });
});

describe('checks made on the translated chat request', () => {
  it('name the endpoint’s own fields', async () => {
    const { apiKey } = await t.createAccount();
    const tooLong = await expectUnified(await post('/responses', { model: 'demo-echo', input: 'hi', max_output_tokens: 1_000_000 }, apiKey), 422, 'Validation failed');
    expect(tooLong.errors).toEqual({ max_output_tokens: ['must be <= 16384 for this model'] });
    const both = await expectUnified(await post('/completions', { model: 42, prompt: ['a', 'b'], n: 0 }, apiKey), 422, 'Validation failed');
    expect(Object.keys(both.errors as object).sort()).toEqual(['model', 'n', 'prompt']);
  });
});

describe('an upstream that fails mid-stream', () => {
  it('ends a completions stream with the error event, which the client raises', async () => {
    const { apiKey } = await t.createAccount();
    upstream.behave({ dropAfterChunks: 2 });
    const stream = await t.client(apiKey).completions.create({ model: 'up-flaky', prompt: 'go', stream: true });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices.map((c) => c.text).join('');
    })().catch((e: unknown) => e);
    upstream.behave({});
    expect(text).toBe('Hello from');
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 502, message: 'The model backend returned an invalid response.' });
  });

  it('ends a responses stream with an error event carrying the unified error, which the client raises', async () => {
    const { apiKey } = await t.createAccount();
    upstream.behave({ dropAfterChunks: 2 });
    const res = await post('/responses', { model: 'up-flaky', input: 'go', stream: true }, apiKey);
    const text = await res.text();
    upstream.behave({});
    const events = text.split('\n\n').filter((frame) => frame.length > 0);
    expect(events[0]).toMatch(/^event: response\.created\ndata: /);
    const last = events.at(-1)!;
    expect(last).toMatch(/^event: error\ndata: /);
    expect(JSON.parse(last.slice(last.indexOf('data: ') + 6))).toMatchObject({
      type: 'error',
      code: '502',
      message: 'The model backend returned an invalid response.',
      error: { code: 502, message: 'The model backend returned an invalid response.' },
    });
    expect(text).not.toContain('response.completed');

    upstream.behave({ dropAfterChunks: 2 });
    const stream = await t.client(apiKey).responses.create({ model: 'up-flaky', input: 'go', stream: true });
    const err = await (async () => {
      for await (const _event of stream);
    })().catch((e: unknown) => e);
    upstream.behave({});
    expect(err).toBeInstanceOf(OpenAI.APIError);
  });
});

describe('a client that leaves mid-stream', () => {
  it.each([
    ['/completions', { prompt: 'go', max_tokens: 1000 }],
    ['/responses', { input: 'go' }],
  ])('on %s aborts the upstream request and is charged for what was delivered', async (path, fields) => {
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    upstream.behave({ pieces: Array.from({ length: 200 }, (_, i) => ` word${i}`), chunkDelayMs: 20, noUsage: true });
    const seen = upstream.requests.length;
    const controller = new AbortController();
    const res = await fetch(`${t.baseURL}${path}`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up-chat', stream: true, ...fields }),
    });
    await readWords(res, 3);
    controller.abort();

    expect(await upstream.requests[seen]!.closed).toBe(true);
    const records = await settledUsage(t, account.id);
    expect(records[0]).toMatchObject({ status: 499, streamed: true });
    expect(records[0]!.completionTokens).toBeGreaterThanOrEqual(3);
    expect(records[0]!.completionTokens).toBeLessThan(200);
    expect(await t.store.balanceOf(account.id)).toBe(10_000_000 - records[0]!.costMicros);
    upstream.behave({});
  });
});
