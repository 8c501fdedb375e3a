// The customer's request log, on SQLite and PostgreSQL: requests made with the openai client
// show up newest first, refused ones with their status and reason, filtered and paged; a
// refused request does not stamp its key as used; refusals older than the retention go.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, sessionClient } from '../dashboard/dashboard-client.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(['sqlite', 'postgres'] as const)('request log on %s', (database) => {
  let t: TestApp;
  let alice: DashboardClient;

  beforeAll(async () => {
    t = await startApp({
      database,
      overrides: {
        request_log: { retention_days: 7 },
        tiers: {
          free: { rpm: 8, tpm: 100_000, concurrency: 4, models: ['demo-*'] },
          pro: { rpm: 8, tpm: 100_000, concurrency: 4, models: ['*'], subscription: true, price_month: 20 },
        },
        models: {
          'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 2, output: 4 } },
          'other-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0 },
        },
      },
    });
    alice = await sessionClient(t);
    await t.store.appendLedgerEntry({ accountId: alice.account.id, kind: 'grant', amountMicros: 100_000_000 });
  });
  afterAll(async () => t?.close());

  async function newKey(name: string, owner = alice): Promise<{ id: string; client: OpenAI }> {
    const res = await owner.post('/keys', { name });
    return { id: res.body.key.id, client: t.client(res.body.secret) };
  }
  const fail = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('the request succeeded'), (err: unknown) => err);
  const flush = async () => Promise.all([t.flushUsage(), t.app.refusals.flush()]);

  it('holds answered and refused requests, newest first, with the refusal’s status and reason', async () => {
    const { id: keyId, client } = await newKey('worker');
    const answer = await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] });
    expect(await fail(client.chat.completions.create({ model: 'other-echo', messages: [{ role: 'user', content: 'hi' }] }))).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(await fail(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await fail(client.chat.completions.create({ model: 'demo-echo', messages: [] }))).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    await flush();

    const log = await alice.get(`/requests?key=${keyId}`);
    expect(log.status, log.text).toBe(200);
    expect(log.body.retentionDays).toBe(7);
    expect(log.body.requests.map((r: { status: number; reason: string | null; model: string | null }) => [r.status, r.reason, r.model])).toEqual([
      [422, 'validation_failed:messages', 'demo-echo'],
      [404, 'model_not_found', 'nope'],
      [403, 'model_not_in_tier', 'other-echo'],
      [200, null, 'demo-echo'],
    ]);
    const [, , , answered] = log.body.requests;
    const [record] = await t.store.listUsage(alice.account.id, { limit: 1 });
    expect(answered).toMatchObject({ requestId: record!.requestId, keyName: 'worker', refused: false, promptTokens: answer.usage!.prompt_tokens, costMicros: record!.costMicros });
    expect(log.body.requests[0]).toMatchObject({ refused: true, keyName: 'worker', costMicros: 0, requestId: expect.any(String) });

    const failed = await alice.get(`/requests?key=${keyId}&outcome=failed`);
    expect(failed.body.requests).toHaveLength(3);
    const succeeded = await alice.get(`/requests?key=${keyId}&outcome=succeeded`);
    expect(succeeded.body.requests.map((r: { status: number }) => r.status)).toEqual([200]);
    const byModel = await alice.get(`/requests?key=${keyId}&model=nope`);
    expect(byModel.body.requests.map((r: { status: number }) => r.status)).toEqual([404]);
  });

  it('holds the refusals of a suspended account and of a paid plan without a subscription', async () => {
    const dave = await sessionClient(t);
    const { id: keyId, client } = await newKey('paused', dave);
    await t.store.setAccountStatus(dave.account.id, 'suspended');
    await t.syncChanges();
    expect(await fail(client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] }))).toBeInstanceOf(OpenAI.PermissionDeniedError);
    await t.store.setAccountStatus(dave.account.id, 'active');
    await t.store.setAccountTier(dave.account.id, 'pro');
    await t.syncChanges();
    expect(await fail(client.models.list())).toBeInstanceOf(OpenAI.PermissionDeniedError);
    await flush();

    const log = await dave.get(`/requests?key=${keyId}`);
    expect(log.body.requests.map((r: { status: number; reason: string | null; model: string | null }) => [r.status, r.reason, r.model])).toEqual([
      [403, 'subscription_inactive', null],
      [403, 'account_suspended', null],
    ]);
  });

  it('a key that was only ever refused is never stamped as used; one that got an answer is', async () => {
    const refused = await newKey('refused only');
    const used = await newKey('used');
    await fail(refused.client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }));
    await used.client.models.list();
    await t.app.lastUsed.flush();
    expect((await t.store.findKeyById(refused.id))!.lastUsedAt).toBeNull();
    expect((await t.store.findKeyById(used.id))!.lastUsedAt).not.toBeNull();
  });

  it('pages through a long log without losing or repeating a request, and rate limiting shows as 429', async () => {
    // An account of its own: its 8 requests a minute are all this test's.
    const carol = await sessionClient(t);
    await t.store.appendLedgerEntry({ accountId: carol.account.id, kind: 'grant', amountMicros: 100_000_000 });
    const { id: keyId, client } = await newKey('busy', carol);
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) {
      statuses.push(await client.models.list().then(() => 200, (err: unknown) => (err as InstanceType<typeof OpenAI.APIError>).status!));
      await client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined);
    }
    await flush();
    // Every chat request is there (none reached a model: 404 or 429), and each models.list
    // that was refused; an answered models.list leaves no record.
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const res = await carol.get(`/requests?key=${keyId}&limit=4${next ? `&before=${encodeURIComponent(next)}` : ''}`);
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.requests.map((r: { id: string }) => r.id));
      next = res.body.next;
    } while (next !== null);
    const all = await carol.get(`/requests?key=${keyId}&limit=200`);
    expect(seen).toEqual(all.body.requests.map((r: { id: string }) => r.id));
    expect(new Set(seen).size).toBe(seen.length);
    const reasons = all.body.requests.map((r: { reason: string }) => r.reason);
    expect(reasons).toContain('rate_limited');
    expect(all.body.requests).toHaveLength(9 + statuses.filter((status) => status !== 200).length);
    expect(statuses).toContain(429);
  });

  it('forgets refusals older than the retention, and never shows another account’s', async () => {
    const { id: keyId } = await newKey('old');
    const old = new Date(Date.now() - 8 * DAY_MS).toISOString();
    const recent = new Date(Date.now() - 6 * DAY_MS).toISOString();
    const refusal = { requestId: 'req_old', accountId: alice.account.id, keyId, memberId: null, model: null, path: '/v1/chat/completions', status: 402, reason: 'insufficient_credits' };
    await t.store.recordRefusals([
      { ...refusal, id: 'refused_old', createdAt: old },
      { ...refusal, id: 'refused_recent', requestId: 'req_recent', createdAt: recent },
    ]);
    expect((await alice.get(`/requests?key=${keyId}`)).body.requests.map((r: { id: string }) => r.id)).toEqual(['refused_recent']);
    expect(await t.app.refusals.prune()).toBe(1);
    const bob = await sessionClient(t);
    expect((await bob.get(`/requests?key=${keyId}`)).body.requests).toEqual([]);
    expect((await bob.get('/requests')).body.requests).toEqual([]);
  });
});
