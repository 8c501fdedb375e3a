import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { jsonOf } from '../helpers/json.js';

const BODY = JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] });
const BASES = ['/v1', '/api/v1'];

let t: TestApp;
let apiKey: string;

beforeAll(async () => {
  t = await startApp();
  ({ apiKey } = await t.createAccount());
});
afterAll(() => t.close());

function post(path: string, headers: Record<string, string>, body = BODY): Promise<Response> {
  return fetch(`${t.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

async function expectUnauthenticated(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  expect(await jsonOf(res)).toEqual({ error: { message: 'Unauthenticated.', code: 401, request_id: requestId } });
}

describe('authentication on every base path', () => {
  it.each(BASES)('a valid key gets 200 on %s', async (base) => {
    const res = await post(`${base}/chat/completions`, { authorization: `Bearer ${apiKey}` });
    expect(res.status).toBe(200);
  });

  it.each(BASES)('a missing Authorization header gets the unified 401 on %s', async (base) => {
    await expectUnauthenticated(await post(`${base}/chat/completions`, {}));
  });

  it.each([
    ['lower-case bearer', (k: string) => `bearer ${k}`],
    ['upper-case BEARER', (k: string) => `BEARER ${k}`],
    ['two spaces', (k: string) => `Bearer  ${k}`],
    ['a tab', (k: string) => `Bearer\t${k}`],
    ['no key', () => 'Bearer'],
    ['Basic scheme', (k: string) => `Basic ${k}`],
    ['the key alone', (k: string) => k],
    ['a trailing word', (k: string) => `Bearer ${k} extra`],
  ])('a malformed header (%s) gets the unified 401', async (_name, header) => {
    await expectUnauthenticated(await post('/v1/chat/completions', { authorization: header(apiKey) }));
  });

  it('a key in the query string is never accepted', async () => {
    for (const param of ['api_key', 'key', 'access_token']) {
      await expectUnauthenticated(await post(`/v1/chat/completions?${param}=${apiKey}`, {}));
    }
  });

  it('a well-formed unknown key gets 401 invalid_api_key', async () => {
    const res = await post('/v1/chat/completions', { authorization: `Bearer ${generateApiKey().secret}` });
    expect(res.status).toBe(401);
    const body = await jsonOf(res);
    expect(body).toEqual({
      error: { code: 'invalid_api_key', message: 'Invalid API key provided.', type: 'authentication_error', request_id: res.headers.get('x-request-id') },
    });
  });

  it('a key with a broken checksum gets 401 invalid_api_key', async () => {
    const last = apiKey.at(-1) === 'a' ? 'b' : 'a';
    const res = await post('/v1/chat/completions', { authorization: `Bearer ${apiKey.slice(0, -1)}${last}` });
    expect(res.status).toBe(401);
    expect((await jsonOf(res)).error.code).toBe('invalid_api_key');
  });

  it('authentication comes before body parsing: malformed JSON without a key is 401', async () => {
    await expectUnauthenticated(await post('/v1/chat/completions', {}, '{not json'));
  });

  it('the openai client raises AuthenticationError for an unknown key', async () => {
    const client = t.client(generateApiKey().secret);
    const err = await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
  });
});

describe('revocation and suspension', () => {
  it('a revoked key gets 401 key_revoked on every base path at once', async () => {
    const { account, apiKey: key } = await t.createAccount();
    const client = t.client(key);
    await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'warm the cache' }] });
    const [record] = await t.store.listKeys(account.id);
    await t.store.revokeKey(record!.id);
    await t.syncChanges();
    for (const base of BASES) {
      const res = await post(`${base}/chat/completions`, { authorization: `Bearer ${key}` });
      expect(res.status).toBe(401);
      expect((await jsonOf(res)).error).toMatchObject({ code: 'key_revoked', type: 'authentication_error' });
    }
  });

  it('a suspended account gets 403, and 200 again once reactivated', async () => {
    const { account, apiKey: key } = await t.createAccount();
    const client = t.client(key);
    await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'ok' }] });
    await t.store.setAccountStatus(account.id, 'suspended');
    await t.syncChanges();
    const res = await post('/v1/chat/completions', { authorization: `Bearer ${key}` });
    expect(await jsonOf(res)).toEqual({
      error: { message: 'You do not have permission to access this resource.', code: 403, reason: 'account_suspended', request_id: res.headers.get('x-request-id') },
    });
    const err = await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);

    await t.store.setAccountStatus(account.id, 'active');
    await t.syncChanges();
    expect((await post('/v1/chat/completions', { authorization: `Bearer ${key}` })).status).toBe(200);
  });
});

