import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { jsonOf } from '../helpers/json.js';

let t: TestApp;
let apiKey: string;

beforeAll(async () => {
  t = await startApp({ overrides: { server: { body_limit_mb: 1 } } });
  ({ apiKey } = await t.createAccount());
});
afterAll(() => t.close());

function request(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${t.origin}${path}`, {
    method: 'POST',
    ...init,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...init.headers },
  });
}

async function expectUnified(res: Response, status: number, message: string): Promise<Record<string, unknown>> {
  expect(res.status).toBe(status);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toMatch(/^[A-Za-z0-9._:-]+$/);
  const body = (await jsonOf(res)) as { error: Record<string, unknown> };
  expect(body.error).toMatchObject({ message, code: status, request_id: requestId });
  return body;
}

describe('methods and paths', () => {
  it.each(['/v1/chat/completions', '/api/v1/chat/completions'])('GET %s is 405 with Allow: POST', async (path) => {
    const res = await request(path, { method: 'GET' });
    expect(res.headers.get('allow')).toBe('POST');
    await expectUnified(res, 405, 'Method not allowed.');
  });

  it('PUT and DELETE on chat/completions are 405 too', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const res = await request('/v1/chat/completions', { method, body: '{}' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('POST on models is 405 with Allow listing GET and HEAD', async () => {
    const res = await request('/v1/models', { body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it.each(['/v1/nope', '/v2/chat/completions', '/v1/chat/completions/extra', '/nope'])('unknown path %s is 404 in the unified body', async (path) => {
    await expectUnified(await request(path, { method: 'GET' }), 404, 'Model not found.');
  });
});

describe('bodies', () => {
  it('malformed JSON is 400', async () => {
    await expectUnified(await request('/v1/chat/completions', { body: '{"model": "demo-echo", "messages": [' }), 400, 'The request body is not valid JSON.');
  });

  it('an empty JSON body is 400', async () => {
    await expectUnified(await request('/v1/chat/completions', { body: '' }), 400, 'The request body is not valid JSON.');
  });

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['multipart/form-data; boundary=x']])('Content-Type %s is 415', async (type) => {
    const res = await request('/v1/chat/completions', { body: '{"model":"demo-echo"}', headers: { 'content-type': type } });
    await expectUnified(res, 415, 'Content-Type must be application/json.');
  });

  it('a POST without Content-Type is 415', async () => {
    const res = await fetch(`${t.origin}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });
    await expectUnified(res, 415, 'Content-Type must be application/json.');
  });

  it('application/json with a charset is accepted', async () => {
    const res = await request('/v1/chat/completions', {
      body: JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'ok' }] }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(200);
  });

  it('a body over the configured limit is 413', async () => {
    const content = 'x'.repeat(1024 * 1024 + 10);
    const res = await request('/v1/chat/completions', { body: JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content }] }) });
    await expectUnified(res, 413, 'The request body is too large.');
  });

  it('an extra field nested 64 deep is carried; deeper is 413 before the body is parsed', async () => {
    const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    // The body itself and messages, message and its extra field take 4 levels.
    const body = (depth: number): string => `{"model":"demo-echo","messages":[{"role":"user","content":"x","extra":${nested(depth)}}]}`;
    const carried = await request('/v1/chat/completions', { body: body(64 - 3) });
    expect(carried.status).toBe(200);
    expect((await jsonOf(carried)).choices[0].message.content).toBe('x');
    await expectUnified(await request('/v1/chat/completions', { body: body(64 - 2) }), 413, 'The request body nests JSON more than 64 levels deep.');
    await expectUnified(await request('/v1/chat/completions', { body: body(200_000) }), 413, 'The request body nests JSON more than 64 levels deep.');
  });

  it('a body of more than 100,000 objects, arrays and strings is 413 before it is parsed', async () => {
    const values = (count: number): string => `[${new Array<string>(count).fill('{}').join(',')}]`;
    // Besides the extra array's items: the body, 6 strings of model, role and content, the
    // messages array and its message, the key "extra" and its array: 12 values.
    const body = (count: number): string => `{"model":"demo-echo","messages":[{"role":"user","content":"x"}],"extra":${values(count)}}`;
    const atLimit = await request('/v1/chat/completions', { body: body(100_000 - 12) });
    expect(atLimit.status).toBe(200);
    await expectUnified(
      await request('/v1/chat/completions', { body: body(100_000 - 11) }),
      413,
      'The request body holds more than 100000 JSON objects, arrays and strings.',
    );
  });

  it('prototype-pollution keys are refused or ignored, never applied', async () => {
    const res = await request('/v1/chat/completions', {
      body: '{"model":"demo-echo","messages":[{"role":"user","content":"x"}],"__proto__":{"polluted":true}}',
    });
    expect([400, 422, 200]).toContain(res.status);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('validation', () => {
  it('wrong types give 422 with one errors entry per invalid field', async () => {
    const res = await request('/v1/chat/completions', {
      body: JSON.stringify({ model: 42, messages: 'hello', temperature: 'hot', n: 0 }),
    });
    const body = await expectUnified(res, 422, 'Validation failed');
    const errors = body.errors as Record<string, string[]>;
    expect(Object.keys(errors).sort()).toEqual(['messages', 'model', 'n', 'temperature']);
    for (const messages of Object.values(errors)) {
      expect(messages.length).toBeGreaterThan(0);
      for (const message of messages) expect(typeof message).toBe('string');
    }
  });

  it('missing model and messages are both reported', async () => {
    const body = await expectUnified(await request('/v1/chat/completions', { body: '{}' }), 422, 'Validation failed');
    expect(Object.keys(body.errors as object).sort()).toEqual(['messages', 'model']);
  });

  it('an empty messages array is 422 on messages', async () => {
    const body = await expectUnified(await request('/v1/chat/completions', { body: '{"model":"demo-echo","messages":[]}' }), 422, 'Validation failed');
    expect(Object.keys(body.errors as object)).toEqual(['messages']);
  });

  it.each([['[]'], ['"text"'], ['null'], ['42'], ['true']])('a JSON body that is not an object (%s) is 422', async (raw) => {
    await expectUnified(await request('/v1/chat/completions', { body: raw }), 422, 'Validation failed');
  });

  it('a message without role or content is reported by its path', async () => {
    const body = await expectUnified(
      await request('/v1/chat/completions', { body: JSON.stringify({ model: 'demo-echo', messages: [{ content: 'x' }, { role: 'user' }] }) }),
      422,
      'Validation failed',
    );
    expect(Object.keys(body.errors as object).sort()).toEqual(['messages.0.role', 'messages.1.content']);
  });

  it('the openai client raises UnprocessableEntityError for invalid params', async () => {
    const err = await t
      .client(apiKey)
      .chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'x' }], temperature: 3 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(422);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('Validation failed');
  });

  it('an unknown model is 404 Model not found. (NotFoundError in the client)', async () => {
    const res = await request('/v1/chat/completions', { body: JSON.stringify({ model: 'gpt-99', messages: [{ role: 'user', content: 'x' }] }) });
    await expectUnified(res, 404, 'Model not found.');
    const err = await t.client(apiKey).chat.completions.create({ model: 'gpt-99', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('max_tokens above the model limit is 422 on max_tokens', async () => {
    const body = await expectUnified(
      await request('/v1/chat/completions', { body: JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'x' }], max_tokens: 10_000_000 }) }),
      422,
      'Validation failed',
    );
    expect(Object.keys(body.errors as object)).toEqual(['max_tokens']);
  });
});

describe('request ids', () => {
  it('every response carries x-request-id, and a plain incoming one is kept', async () => {
    const res = await request('/v1/models', { method: 'GET', headers: { 'x-request-id': 'trace-abc-123' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('trace-abc-123');
  });

  it('an incoming request id with odd characters is replaced', async () => {
    const res = await request('/v1/nope', { method: 'GET', headers: { 'x-request-id': 'bad id <script>' } });
    expect(res.headers.get('x-request-id')).not.toBe('bad id <script>');
    expect((await jsonOf(res)).error.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('two requests get different ids', async () => {
    const a = await request('/v1/models', { method: 'GET' });
    const b = await request('/v1/models', { method: 'GET' });
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});
