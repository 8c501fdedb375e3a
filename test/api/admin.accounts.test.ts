// The admin API at work, on SQLite and PostgreSQL: paging and search through accounts,
// every money change leaving one ledger row and one audit row (and a refused one neither),
// and changes taking effect on /v1 at once: the customer's openai client gets 403 after a
// suspension, answers again after reactivation, and 401 after its key is revoked.
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPES } from '../../src/auth/admin-key.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { adminCall, adminKey } from './admin-client.js';

describe.each(['sqlite', 'postgres'] as const)('the admin API on %s', (database) => {
  let t: TestApp;
  let bearer: string;
  const call = (method: string, path: string, body?: unknown) => adminCall(t, { bearer }, method, path, body);

  beforeAll(async () => {
    t = await startApp({ database });
    bearer = await adminKey(t, [...ADMIN_SCOPES]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('pages through accounts (sort=oldest) and finds them by part of an email or name, any case, or by id', async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call('POST', '/accounts', { email: `Pager${i}@Paging.example`, name: i === 3 ? 'Ada 100%_Lovelace' : null });
      expect(res.status).toBe(201);
      created.push(res.body.account.id);
    }
    const first = await call('GET', '/accounts?search=paging.example&limit=2&sort=oldest');
    expect(first.body).toMatchObject({ total: 5, limit: 2, offset: 0 });
    const second = await call('GET', '/accounts?search=paging.example&limit=2&offset=2&sort=oldest');
    const third = await call('GET', '/accounts?search=paging.example&limit=2&offset=4&sort=oldest');
    const paged = [...first.body.accounts, ...second.body.accounts, ...third.body.accounts].map((a: { id: string }) => a.id);
    expect(paged).toEqual(created);
    expect(third.body.accounts).toHaveLength(1);

    expect((await call('GET', '/accounts?search=PAGER2')).body.accounts.map((a: { email: string }) => a.email)).toEqual(['pager2@paging.example']);
    expect((await call('GET', `/accounts?search=${encodeURIComponent('100%_love')}`)).body.accounts.map((a: { id: string }) => a.id)).toEqual([created[3]]);
    // LIKE's wildcards are literal in a search: "%" alone matches only a name holding one.
    expect((await call('GET', '/accounts?search=%25')).body.total).toBe(1);
    expect((await call('GET', `/accounts?search=${created[1]}`)).body.accounts.map((a: { id: string }) => a.id)).toEqual([created[1]]);
    expect((await call('GET', '/accounts?search=nobody-here')).body).toMatchObject({ accounts: [], total: 0 });

    const bad = await call('GET', '/accounts?limit=0&offset=-1');
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['limit', 'offset']);
  });

  it('leaves one ledger row and one audit row for every money change, and neither for a refused one', async () => {
    const created = await call('POST', '/accounts', { email: 'money@example.test', credits_micros: 2_000_000 });
    const id: string = created.body.account.id;
    expect(created.body.account.balance_micros).toBe(2_000_000);

    const grant = await call('POST', `/accounts/${id}/credits/grant`, { amount_micros: 3_000_000, reason: 'goodwill' });
    expect(grant.status).toBe(200);
    expect(grant.body).toMatchObject({ entry: { kind: 'grant', amount_micros: 3_000_000, reason: 'goodwill' }, balance_micros: 5_000_000 });
    const adjust = await call('POST', `/accounts/${id}/credits/adjust`, { amount_micros: -1_250_000, reason: 'correction' });
    expect(adjust.body).toMatchObject({ entry: { kind: 'adjustment', amount_micros: -1_250_000 }, balance_micros: 3_750_000 });
    const refused = await call('POST', `/accounts/${id}/credits/adjust`, { amount_micros: -4_000_000, reason: 'too much' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe('The balance cannot go below zero.');

    const ledger = await call('GET', `/accounts/${id}/ledger`);
    expect(ledger.body.balance_micros).toBe(3_750_000);
    expect(ledger.body.entries.map((e: { amount_micros: number }) => e.amount_micros)).toEqual([-1_250_000, 3_000_000, 2_000_000]);
    expect(await t.store.sumLedger(id)).toBe(3_750_000);

    const audit = await call('GET', `/audit?target_id=${id}`);
    const money = audit.body.entries.filter((e: { action: string }) => e.action.startsWith('credits.') || e.action === 'account.create');
    expect(money.map((e: { action: string; before: unknown; after: { balance_micros: number; ledger_entry_id?: number } }) => [e.action, e.before, e.after.balance_micros])).toEqual([
      ['credits.adjust', { balance_micros: 5_000_000 }, 3_750_000],
      ['credits.grant', { balance_micros: 2_000_000 }, 5_000_000],
      ['account.create', null, 2_000_000],
    ]);
    // Each money row names its ledger entry.
    expect(money[0].after.ledger_entry_id).toBe(ledger.body.entries[0].id);
    expect(money[1].after.ledger_entry_id).toBe(ledger.body.entries[1].id);
  });

  it('takes a suspension, a reactivation and a key revocation to /v1 at once', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 5 });
    const client = t.client(apiKey);
    const ask = () => client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hello' }] });
    expect((await ask()).choices[0]!.message.content).toBe('hello');

    expect((await call('POST', `/accounts/${account.id}/suspend`)).body.account.status).toBe('suspended');
    await expect(ask()).rejects.toMatchObject({ status: 403 });

    expect((await call('POST', `/accounts/${account.id}/reactivate`)).body.account.status).toBe('active');
    expect((await ask()).choices[0]!.message.content).toBe('hello');

    const keys = await call('GET', `/accounts/${account.id}/keys`);
    expect(keys.body.keys).toEqual([expect.objectContaining({ status: 'active', key: expect.stringMatching(/^sk-lmg-.{4}….{4}$/) })]);
    const revoked = await call('POST', `/keys/${keys.body.keys[0].id}/revoke`);
    expect(revoked.body.key.status).toBe('revoked');
    const err = await ask().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(err).toMatchObject({ status: 401, code: 'key_revoked' });

    const actions = (await call('GET', `/audit?target_id=${account.id}`)).body.entries.map((e: { action: string }) => e.action);
    expect(actions).toEqual(['account.reactivate', 'account.suspend']);
  });

  it('creates a key whose secret works once shown, sets a tier, and generates a password', async () => {
    const { account } = await t.createAccount({ credits: 5 });
    const created = await call('POST', `/accounts/${encodeURIComponent(account.email)}/keys`, { name: 'from-admin' });
    expect(created.status).toBe(201);
    const reply = await t.client(created.body.secret).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'ok' }] });
    expect(reply.choices[0]!.message.content).toBe('ok');

    expect((await call('POST', `/accounts/${account.id}/tier`, { tier: 'gold' })).status).toBe(422);
    expect((await call('POST', `/accounts/${account.id}/tier`, { tier: 'pro' })).body.account.tier).toBe('pro');
    expect((await call('POST', `/accounts/${account.id}/price-multiplier`, { price_multiplier_ppm: 0 })).status).toBe(422);
    expect((await call('POST', `/accounts/${account.id}/price-multiplier`, { price_multiplier_ppm: 900_000 })).body.account.price_multiplier_ppm).toBe(900_000);

    const password = await call('POST', `/accounts/${account.id}/password`, {});
    expect(password.body.generated_password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(await t.store.findPasswordHash(account.id)).toMatch(/^scrypt\$/);
  });

  it('lists codes without the code, disables one, and refuses to disable a redeemed one', async () => {
    const created = await call('POST', '/codes', { amount_micros: 1_500_000, count: 2, expires_at: '2999-01-01T00:00:00Z' });
    expect(created.status).toBe(201);
    const [first, second] = created.body.codes;
    expect(first.code).toMatch(/^LMG-/);
    const listed = await call('GET', '/codes');
    expect(JSON.stringify(listed.body)).not.toContain(first.code);
    expect(listed.body.codes.find((c: { id: string }) => c.id === first.id)).toMatchObject({ amount_micros: 1_500_000, expires_at: '2999-01-01T00:00:00.000Z', disabled_at: null });

    expect((await call('POST', `/codes/${first.id}/disable`)).body.code.disabled_at).toEqual(expect.any(String));
    const { account } = await t.createAccount({ credits: 0 });
    await t.app.commands.credits.redeemCode(account.id, second.code);
    const redeemed = await call('POST', `/codes/${second.id}/disable`);
    expect(redeemed.status).toBe(409);
    expect((await call('POST', '/codes/code_nothing/disable')).status).toBe(404);
    expect((await call('POST', '/codes', { amount_micros: 1, expires_at: '2001-01-01T00:00:00Z' })).body.errors).toEqual({ expires_at: ['Must be in the future.'] });
  });

  it('sums usage across accounts by day, model, account, key and status, with the credits sold, redeemed and granted each day', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 5 });
    const [code] = await t.app.commands.codes.create({ amountMicros: 2_000_000, count: 1, expiresAt: null }, { kind: 'cli', id: 'test' });
    await t.app.commands.credits.redeemCode(account.id, code!.code);
    await t.client(apiKey).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'count me' }] });
    await t.flushUsage();
    const usage = await call('GET', `/usage?account_id=${account.id}`);
    expect(usage.status).toBe(200);
    expect(usage.body.days).toHaveLength(30);
    expect(usage.body.days.at(-1)).toMatchObject({ requests: 1, credits_sold_micros: 0, credits_redeemed_micros: 2_000_000, credits_granted_micros: 5_000_000 });
    expect(usage.body.days.at(-2)).toMatchObject({ requests: 0, credits_sold_micros: 0, credits_granted_micros: 0 });
    expect(usage.body.by_model).toEqual([expect.objectContaining({ model: 'demo-echo', requests: 1 })]);
    expect(usage.body.by_account).toEqual([expect.objectContaining({ account_id: account.id, email: account.email, requests: 1 })]);
    expect(usage.body.by_key).toEqual([expect.objectContaining({ key_name: 'test', account_id: account.id, requests: 1 })]);
    expect(usage.body.by_status).toEqual([{ status: 200, requests: 1, refused: 0 }]);
    const all = await call('GET', '/usage');
    expect(all.body.by_account.length).toBeGreaterThanOrEqual(1);
  });
});
