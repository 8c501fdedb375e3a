// A key's own controls, set in the dashboard and enforced on the API, with the openai
// client: rename, expiry (401 key_expired), allowed models and client addresses (403),
// and the key's own requests per minute (429); each refusal in the spec's shape with an
// `error.reason`, and in the customer's request log. A key without controls is untouched.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_MESSAGES } from '../../src/http/error-reply.js';
import { sessionClient, type DashboardClient } from '../dashboard/dashboard-client.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const HI = [{ role: 'user' as const, content: 'hi' }];
const fail = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('the request succeeded'), (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);

describe.each(['sqlite', 'postgres'] as const)('per-key controls on %s', (database) => {
  let t: TestApp;
  let alice: DashboardClient;

  beforeAll(async () => {
    t = await startApp({
      database,
      overrides: {
        server: { port: 0, trust_proxy: true },
        tiers: { free: { rpm: 1_000, tpm: 1_000_000, concurrency: 8, models: ['demo-*'] } },
      },
    });
    alice = await sessionClient(t);
    await t.store.appendLedgerEntry({ accountId: alice.account.id, kind: 'grant', amountMicros: 100_000_000 });
  });
  afterAll(async () => t?.close());

  async function newKey(body: Record<string, unknown>): Promise<{ id: string; secret: string; client: OpenAI; view: Record<string, unknown> }> {
    const res = await alice.post('/keys', { name: 'controlled', ...body });
    expect(res.status, res.text).toBe(201);
    return { id: res.body.key.id, secret: res.body.secret, client: t.client(res.body.secret), view: res.body.key };
  }
  const patch = (id: string, body: unknown) => alice.request('PATCH', `/keys/${id}`, { body });

  it('a key without controls shows none and answers as before', async () => {
    const { client, view } = await newKey({});
    expect(view).toMatchObject({ expiresAt: null, expired: false, allowedModels: null, allowedIps: null, rpm: null });
    const answer = await client.chat.completions.create({ model: 'demo-echo', messages: HI });
    expect(answer.choices[0]!.message.content).toBe('hi');
  });

  it('renames a key; another account cannot touch it', async () => {
    const { id } = await newKey({});
    const renamed = await patch(id, { name: '  ci runner ' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.key.name).toBe('ci runner');
    expect((await t.store.findKeyById(id))!.name).toBe('ci runner');
    const bob = await sessionClient(t);
    expect((await bob.request('PATCH', `/keys/${id}`, { body: { name: 'mine' } })).status).toBe(404);
    expect((await patch(id, { name: '' })).status).toBe(422);
  });

  it('refuses an expired key with 401 key_expired, in OpenAI’s shape', async () => {
    const { id, secret, client } = await newKey({ expiresAt: '2999-12-31' });
    expect((await t.store.findKeyById(id))!.controls.expiresAt).toBe('3000-01-01T00:00:00.000Z');
    await client.models.list();
    // Time passes: the expiry set in the past through the command, as no form allows.
    await t.app.commands.keys.update(id, { controls: { expiresAt: new Date(Date.now() - 1_000).toISOString() } });
    const err = await fail(client.chat.completions.create({ model: 'demo-echo', messages: HI }));
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.error).toMatchObject({ code: 'key_expired', type: 'authentication_error', reason: 'key_expired', message: 'This API key has expired.' });
    const subscription = await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${secret}` } });
    expect(subscription.status).toBe(401);
    expect(((await subscription.json()) as { error: { code: string } }).error.code).toBe('key_expired');
    const past = await alice.post('/keys', { name: 'late', expiresAt: '2001-01-01' });
    expect(past.status).toBe(422);
    expect(past.body.errors).toEqual([{ field: 'expiresAt', message: 'The expiry date is already past.' }]);
    expect((await alice.post('/keys', { name: 'late', expiresAt: 'soon' })).status).toBe(422);
  });

  it('allows only the key’s models (globs), with 403 key_model_not_allowed, on every endpoint', async () => {
    const { id, secret, client } = await newKey({ allowedModels: ['demo-echo', 'demo-emb*'] });
    await client.chat.completions.create({ model: 'demo-echo', messages: HI });
    const err = await fail(client.chat.completions.create({ model: 'demo-lorem', messages: HI }));
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(err.error).toMatchObject({ message: SPEC_MESSAGES[403], code: 403, reason: 'key_model_not_allowed' });
    const responses = await fail(client.responses.create({ model: 'demo-lorem', input: 'hi' }));
    expect(responses.error).toMatchObject({ reason: 'key_model_not_allowed' });
    const anthropic = new Anthropic({ apiKey: secret, baseURL: t.origin, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'demo-lorem', max_tokens: 4, messages: HI }).then(
      () => expect.unreachable('the request succeeded'),
      (err: unknown) => err,
    );
    expect(message).toBeInstanceOf(Anthropic.PermissionDeniedError);

    // Cleared: the tier decides again.
    const cleared = await patch(id, { allowedModels: [] });
    expect(cleared.body.key.allowedModels).toBeNull();
    await client.chat.completions.create({ model: 'demo-lorem', messages: HI, max_tokens: 4 });

    await t.app.refusals.flush();
    const log = await alice.get(`/requests?key=${id}&outcome=failed`);
    expect(log.body.requests.map((r: { status: number; reason: string; model: string }) => [r.status, r.reason, r.model])).toEqual([
      [403, 'key_model_not_allowed', 'demo-lorem'],
      [403, 'key_model_not_allowed', 'demo-lorem'],
      [403, 'key_model_not_allowed', 'demo-lorem'],
    ]);
  });

  it('allows only the key’s client addresses (CIDR, IPv4 and IPv6), with 403 key_ip_not_allowed', async () => {
    const { id, secret, client } = await newKey({ allowedIps: ['10.0.0.0/8', '2001:db8::/32'] });
    const err = await fail(client.chat.completions.create({ model: 'demo-echo', messages: HI }));
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(err.error).toMatchObject({ message: SPEC_MESSAGES[403], reason: 'key_ip_not_allowed' });
    // Behind a trusted proxy, the client's address is the forwarded one.
    const viaProxy = (address: string) => new OpenAI({ apiKey: secret, baseURL: t.baseURL, maxRetries: 0, defaultHeaders: { 'x-forwarded-for': address } });
    await viaProxy('2001:db8::7').chat.completions.create({ model: 'demo-echo', messages: HI });
    await viaProxy('10.1.2.3').models.list();
    expect((await fail(viaProxy('2001:db9::7').models.list())).error).toMatchObject({ reason: 'key_ip_not_allowed' });

    const bad = await patch(id, { allowedIps: ['10.0.0.0/33'] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('allowedIps');
    expect((await patch(id, { allowedIps: ['127.0.0.1', '::1'] })).body.key.allowedIps).toEqual(['127.0.0.1', '::1']);
    await client.chat.completions.create({ model: 'demo-echo', messages: HI });

    await t.app.refusals.flush();
    const log = await alice.get(`/requests?key=${id}&outcome=failed`);
    expect(log.body.requests.map((r: { reason: string }) => r.reason)).toEqual(['key_ip_not_allowed', 'key_ip_not_allowed']);
  });

  it('counts no refused request against a limit: the key’s model refusal, an unknown model, a bad body', async () => {
    const { client } = await newKey({ rpm: 3, allowedModels: ['demo-echo'] });
    const refusals = [
      fail(client.chat.completions.create({ model: 'demo-lorem', messages: HI })), // 403 key_model_not_allowed
      fail(client.chat.completions.create({ model: 'demo-nothing', messages: HI })), // 404
      fail(client.chat.completions.create({ model: 'demo-echo', messages: [] })), // 422
    ];
    const statuses = [];
    for (const refusal of refusals) statuses.push((await refusal).status);
    expect(statuses).toEqual([403, 404, 422]);
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < 4; i++) outcomes.push(await client.chat.completions.create({ model: 'demo-echo', messages: HI }).then(() => 200, (err: InstanceType<typeof OpenAI.APIError>) => err.status ?? String(err)));
    expect(outcomes).toEqual([200, 200, 200, 429]);
  });

  it('holds the key to its own requests per minute, with 429 key_rate_limit and the rate-limit headers', async () => {
    const { id, client } = await newKey({ rpm: 2 });
    await client.chat.completions.create({ model: 'demo-echo', messages: HI });
    await client.chat.completions.create({ model: 'demo-echo', messages: HI });
    const err = await fail(client.chat.completions.create({ model: 'demo-echo', messages: HI }));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.error).toMatchObject({ message: SPEC_MESSAGES[429], reason: 'key_rate_limit' });
    expect(err.headers!.get('x-ratelimit-limit')).toBe('2');
    expect(err.headers!.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(err.headers!.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect(Number(err.headers!.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // Another key of the same account is not held by it.
    const { client: other } = await newKey({});
    await other.chat.completions.create({ model: 'demo-echo', messages: HI });

    await t.app.refusals.flush();
    const log = await alice.get(`/requests?key=${id}&outcome=failed`);
    expect(log.body.requests.map((r: { status: number; reason: string }) => [r.status, r.reason])).toEqual([[429, 'key_rate_limit']]);
    expect((await patch(id, { rpm: 0 })).status).toBe(422);
  });
});
