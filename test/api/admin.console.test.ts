// The admin API behind the console's "what went wrong" views, on SQLite and PostgreSQL:
// refusals counted in the usage report's statuses, an account's request log with its
// refusals (a 422 naming its field), the ledger and the accounts a page at a time in the
// order asked, creating an account, the audit log naming emails and keys, and "credits
// sold" counting payments only, not redemption codes.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPES } from '../../src/auth/admin-key.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { adminCall, adminKey } from './admin-client.js';

describe.each(['sqlite', 'postgres'] as const)('the console’s admin API on %s', (database) => {
  let t: TestApp;
  let bearer: string;
  const call = (method: string, path: string, body?: unknown) => adminCall(t, { bearer }, method, path, body);
  const fail = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('the request succeeded'), (err: unknown) => err);
  const flush = async () => Promise.all([t.flushUsage(), t.app.refusals.flush()]);

  beforeAll(async () => {
    t = await startApp({ database });
    bearer = await adminKey(t, [...ADMIN_SCOPES]);
  });
  afterAll(async () => {
    await t.close();
  });

  it("pages through an account's request log, refusals included with reason and field, and counts them by status", async () => {
    const { account, apiKey } = await t.createAccount({ credits: 5 });
    const client = t.client(apiKey);
    const before = await call('GET', `/usage?account_id=${account.id}`);
    expect(before.body.by_status).toEqual([]);
    await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] });
    expect(await fail(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await fail(client.chat.completions.create({ model: 'demo-echo', messages: [] }))).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    await flush();

    const first = await call('GET', `/accounts/${account.id}/requests?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.requests.map((r: { status: number; reason: string | null; refused: boolean; key_name: string }) => [r.status, r.reason, r.refused, r.key_name])).toEqual([
      [422, 'validation_failed:messages', true, 'test'],
      [404, 'model_not_found', true, 'test'],
    ]);
    expect(first.body.next).toEqual(expect.any(String));
    const second = await call('GET', `/accounts/${account.id}/requests?limit=2&before=${encodeURIComponent(first.body.next)}`);
    expect(second.body.requests.map((r: { status: number; refused: boolean }) => [r.status, r.refused])).toEqual([[200, false]]);
    expect(second.body.next).toBeNull();
    expect((await call('GET', `/accounts/${account.id}/requests?outcome=failed`)).body.requests).toHaveLength(2);
    expect((await call('GET', '/accounts/acct_nobody/requests')).status).toBe(404);

    const usage = await call('GET', `/usage?account_id=${account.id}`);
    expect(usage.body.by_status).toEqual([
      { status: 200, requests: 1, refused: 0 },
      { status: 404, requests: 1, refused: 1 },
      { status: 422, requests: 1, refused: 1 },
    ]);
  });

  it('pages through the ledger with before_id', async () => {
    const { account } = await t.createAccount({ credits: 1 });
    for (let i = 2; i <= 5; i++) expect((await call('POST', `/accounts/${account.id}/credits/grant`, { amount_micros: i * 1_000_000, reason: `grant ${i}` })).status).toBe(200);
    const amounts = (entries: { amount_micros: number }[]) => entries.map((e) => e.amount_micros / 1_000_000);
    const first = await call('GET', `/accounts/${account.id}/ledger?limit=2`);
    expect(amounts(first.body.entries)).toEqual([5, 4]);
    const second = await call('GET', `/accounts/${account.id}/ledger?limit=2&before_id=${first.body.next_before_id}`);
    expect(amounts(second.body.entries)).toEqual([3, 2]);
    const third = await call('GET', `/accounts/${account.id}/ledger?limit=2&before_id=${second.body.next_before_id}`);
    expect(amounts(third.body.entries)).toEqual([1]);
    expect(third.body.next_before_id).toBeNull();
  });

  it('creates accounts and lists them newest first by default, or by email, balance or age', async () => {
    const emails = ['b-sort@sorting.example', 'c-sort@sorting.example', 'a-sort@sorting.example'];
    for (const [i, email] of emails.entries()) {
      const created = await call('POST', '/accounts', { email, name: `Sort ${i}`, credits_micros: (i + 1) * 1_000_000 });
      expect(created.status).toBe(201);
      expect(created.body.account).toMatchObject({ email, balance_micros: (i + 1) * 1_000_000 });
      // Distinct creation times, so that the order by age is the order of creation.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const listed = async (sort?: string) =>
      (await call('GET', `/accounts?search=sorting.example${sort === undefined ? '' : `&sort=${sort}`}`)).body.accounts.map((a: { email: string }) => a.email.slice(0, 1));
    expect(await listed()).toEqual(['a', 'c', 'b']);
    expect(await listed('oldest')).toEqual(['b', 'c', 'a']);
    expect(await listed('email')).toEqual(['a', 'b', 'c']);
    expect(await listed('balance')).toEqual(['a', 'c', 'b']);
    expect((await call('GET', '/accounts?sort=name')).status).toBe(422);
    expect((await call('POST', '/accounts', { email: emails[0] })).status).toBe(409);
    const audit = await call('GET', `/audit?target_id=${(await t.store.findAccount(emails[2]!))!.id}`);
    expect(audit.body.entries[0]).toMatchObject({ action: 'account.create', target: { kind: 'account', name: emails[2] } });
  });

  it("names accounts by email and keys by name in the audit log, and shows a key's limits", async () => {
    const { account } = await t.createAccount({ credits: 1 });
    const key = await call('POST', `/accounts/${account.id}/keys`, { name: 'deploy-bot' });
    await t.app.commands.keys.update(key.body.key.id, { controls: { rpm: 30, allowedModels: ['demo-*'] } });
    await call('POST', `/keys/${key.body.key.id}/revoke`);
    const entries = (await call('GET', '/audit?limit=5')).body.entries as { action: string; actor: { kind: string; name: string | null }; target: { kind: string; name: string | null } }[];
    const revoke = entries.find((e) => e.action === 'key.revoke')!;
    expect(revoke.target).toMatchObject({ kind: 'key', name: 'deploy-bot' });
    expect(revoke.actor).toMatchObject({ kind: 'admin_key', name: `test ${ADMIN_SCOPES.join(',')}` });
    const keys = await call('GET', `/accounts/${account.id}/keys`);
    expect(keys.body.keys.find((k: { name: string }) => k.name === 'deploy-bot').controls).toEqual({
      expires_at: null,
      allowed_models: ['demo-*'],
      allowed_ips: null,
      rpm: 30,
      credit_limit_micros: null,
      credit_limit_period: null,
    });
  });

  it('counts a redemption code apart from credits sold', async () => {
    const { account } = await t.createAccount({ credits: 0 });
    const code = await call('POST', '/codes', { amount_micros: 2_500_000 });
    await t.app.commands.credits.redeemCode(account.id, code.body.codes[0].code);
    const usage = await call('GET', `/usage?account_id=${account.id}`);
    const today = usage.body.days.at(-1);
    expect(today).toMatchObject({ credits_sold_micros: 0, credits_redeemed_micros: 2_500_000 });
  });
});
