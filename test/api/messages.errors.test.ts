// POST /v1/messages refusals in Anthropic's error shape, `{"type":"error","error":{"type",
// "message"},"request_id"}`, with the status the error table gives, so that the
// @anthropic-ai/sdk raises the class of each status.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANTHROPIC_PIECES, startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

let t: TestApp;
let upstream: FakeAnthropic;

beforeAll(async () => {
  upstream = await startFakeAnthropic();
  t = await startApp({
    overrides: {
      server: { port: 0, body_limit_mb: 0.05 },
      tiers: {
        free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['demo-*', 'claude'] },
        tiny: { rpm: 1, tpm: 10_000_000, concurrency: 10, models: ['*'] },
      },
      models: {
        'demo-echo': { backend: 'demo', kind: 'echo', price: { input: 1, output: 1 } },
        'premium-echo': { backend: 'demo', kind: 'echo' },
        claude: { deployments: [{ kind: 'anthropic', url: upstream.url, model: 'claude-upstream' }] },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await upstream.close();
});

const BODY = { model: 'demo-echo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

function post(headers: Record<string, string>, body: unknown = BODY): Promise<Response> {
  return fetch(`${t.baseURL}/messages`, {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The status and Anthropic's body, with the request id the response names. */
async function expectAnthropicError(res: Response, status: number, type: string): Promise<string> {
  expect(res.status).toBe(status);
  const body = await jsonOf(res);
  expect(body).toEqual({ type: 'error', error: { type, message: expect.any(String) }, request_id: res.headers.get('x-request-id') });
  return (body.error as { message: string }).message;
}

function sdk(apiKey: string): Anthropic {
  return new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0 });
}

async function sdkError(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe('401', () => {
  it('no key, a malformed key, an unknown key and a revoked key: authentication_error, by x-api-key or Bearer', async () => {
    const missing = await post({});
    expect(missing.headers.get('request-id')).toBe(missing.headers.get('x-request-id'));
    expect(await expectAnthropicError(missing, 401, 'authentication_error')).toBe('Unauthenticated.');
    await expectAnthropicError(await post({ 'x-api-key': 'not-a-key' }), 401, 'authentication_error');
    await expectAnthropicError(await post({ authorization: 'Bearer sk-lmg-unknown' }), 401, 'authentication_error');
    const { account, apiKey } = await t.createAccount();
    const [key] = await t.store.listKeys(account.id);
    await t.store.revokeKey(key!.id);
    await t.syncChanges();
    await expectAnthropicError(await post({ 'x-api-key': apiKey }), 401, 'authentication_error');
    expect(await sdkError(sdk(apiKey).messages.create({ model: 'demo-echo', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(Anthropic.AuthenticationError);
  });
});

describe('402', () => {
  it('no credit: billing_error, and the SDK’s 402', async () => {
    const { apiKey } = await t.createAccount({ credits: 0 });
    await expectAnthropicError(await post({ 'x-api-key': apiKey }), 402, 'billing_error');
    const err = await sdkError(sdk(apiKey).messages.create({ model: 'demo-echo', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }));
    expect(err).toMatchObject({ status: 402 });
  });
});

describe('403', () => {
  it('a model outside the tier, and a suspended account: permission_error', async () => {
    const { account, apiKey } = await t.createAccount();
    await expectAnthropicError(await post({ 'x-api-key': apiKey }, { ...BODY, model: 'premium-echo' }), 403, 'permission_error');
    await t.store.setAccountStatus(account.id, 'suspended');
    await t.syncChanges();
    await expectAnthropicError(await post({ 'x-api-key': apiKey }), 403, 'permission_error');
    expect(await sdkError(sdk(apiKey).messages.create({ model: 'demo-echo', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(Anthropic.PermissionDeniedError);
  });
});

describe('404', () => {
  it('an unknown model: not_found_error', async () => {
    const { apiKey } = await t.createAccount();
    expect(await expectAnthropicError(await post({ 'x-api-key': apiKey }, { ...BODY, model: 'claude-nope' }), 404, 'not_found_error')).toBe('Model not found.');
    expect(await sdkError(sdk(apiKey).messages.create({ model: 'claude-nope', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(Anthropic.NotFoundError);
  });
});

describe('422', () => {
  it('invalid fields are named in the message, with Anthropic’s field paths', async () => {
    const { apiKey } = await t.createAccount();
    const message = await expectAnthropicError(
      await post({ 'x-api-key': apiKey }, { model: 'demo-echo', messages: [{ role: 'system', content: [{ type: 'document' }] }], temperature: 1.5 }),
      422,
      'invalid_request_error',
    );
    expect(message).toContain('max_tokens: must be an integer of at least 1');
    expect(message).toContain('messages.0.role: must be "user" or "assistant"');
    expect(message).toContain('messages.0.content.0.type:');
    expect(message).toContain('temperature: must be a number from 0 to 1');
    expect(await sdkError(sdk(apiKey).messages.create({ model: 'demo-echo', max_tokens: 0, messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(Anthropic.UnprocessableEntityError);
  });

  it('the anthropic-version header is required', async () => {
    const { apiKey } = await t.createAccount();
    const res = await fetch(`${t.baseURL}/messages`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
    expect(await expectAnthropicError(res, 422, 'invalid_request_error')).toContain('anthropic-version');
  });
});

describe('413', () => {
  it('a body over the limit: request_too_large, and the connection survives to read the answer', async () => {
    const { apiKey } = await t.createAccount();
    const res = await post({ 'x-api-key': apiKey }, { ...BODY, messages: [{ role: 'user', content: 'x'.repeat(100_000) }] });
    await expectAnthropicError(res, 413, 'request_too_large');
  });
});

describe('429', () => {
  it('over the requests per minute: rate_limit_error with Retry-After and X-RateLimit-*', async () => {
    const { apiKey } = await t.createAccount({ tier: 'tiny' });
    expect((await post({ 'x-api-key': apiKey })).status).toBe(200);
    const res = await post({ 'x-api-key': apiKey });
    await expectAnthropicError(res, 429, 'rate_limit_error');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await sdkError(sdk(apiKey).messages.create({ model: 'demo-echo', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(Anthropic.RateLimitError);
  });
});

describe('after the stream started', () => {
  it('an upstream failure is the stream’s last event, `event: error`, which the SDK raises', async () => {
    const { apiKey } = await t.createAccount();
    upstream.behave({ errorEventAfter: 2 });
    const stream = sdk(apiKey).messages.stream({ model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const err = await sdkError(stream.finalMessage());
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(text).toBe(ANTHROPIC_PIECES.slice(0, 2).join(''));

    const res = await post({ 'x-api-key': apiKey }, { ...BODY, model: 'claude', stream: true });
    const events = await res.text();
    expect(events).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The model backend returned an invalid response\."\}\}\n\n$/);
    upstream.behave({});
  });
});
