// Every admin action through Commands leaves its audit row in the transaction of the
// change, on SQLite and PostgreSQL: a change that fails leaves neither, a customer's own
// action (no actor) leaves none, and money changes carry the balance before and after.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { Commands } from '../../src/commands/commands.js';
import { BalanceWouldGoNegativeError, Refusal } from '../../src/errors.js';
import { KyselyStore } from '../../src/store/kysely-store.js';
import type { Actor, Store } from '../../src/store/store.js';
import { STORE_BACKENDS, type OpenedStore } from '../helpers/store-backends.js';

const OPERATOR: Actor = { kind: 'admin_key', id: 'admkey_test' };

describe.each(STORE_BACKENDS)('audited commands on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;
  let commands: Commands;

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
    commands = new Commands(store);
  });

  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  let counter = 0;
  const newAccount = async (credits = 0) =>
    (await commands.accounts.create({ email: `audit${++counter}@example.test`, name: null, tier: 'free', creditsMicros: credits, creditsReason: 'start' }, OPERATOR)).account;

  it('records a grant and an adjustment with the ledger entry and the balance before and after', async () => {
    const account = await newAccount();
    const granted = await commands.credits.grant({ accountId: account.id, amountMicros: 5_000_000, reason: 'welcome' }, OPERATOR);
    const adjusted = await commands.credits.adjust({ accountId: account.id, amountMicros: -1_500_000, reason: 'refund' }, OPERATOR);

    const [adjustRow, grantRow] = await store.listAudit({ limit: 10, targetId: account.id });
    expect(grantRow).toMatchObject({
      actor: OPERATOR,
      action: 'credits.grant',
      target: { kind: 'account', id: account.id },
      before: { balance_micros: 0 },
      after: { balance_micros: 5_000_000, amount_micros: 5_000_000, reason: 'welcome', ledger_entry_id: granted.entry.id },
    });
    expect(adjustRow).toMatchObject({
      action: 'credits.adjust',
      before: { balance_micros: 5_000_000 },
      after: { balance_micros: 3_500_000, amount_micros: -1_500_000, ledger_entry_id: adjusted.entry.id },
    });
    expect(await store.balanceOf(account.id)).toBe(3_500_000);
    expect(await store.sumLedger(account.id)).toBe(3_500_000);
  });

  it('leaves neither ledger entry nor audit row when an adjustment would go below zero', async () => {
    const account = await newAccount(1_000_000);
    await expect(commands.credits.adjust({ accountId: account.id, amountMicros: -2_000_000, reason: 'too much' }, OPERATOR)).rejects.toBeInstanceOf(
      BalanceWouldGoNegativeError,
    );
    expect((await store.listAudit({ limit: 10, targetId: account.id })).map((r) => r.action)).toEqual(['account.create']);
    expect(await store.listLedger(account.id)).toHaveLength(1);
    expect(await store.balanceOf(account.id)).toBe(1_000_000);
  });

  it('rolls the change back when its audit row cannot be written', async () => {
    const account = await newAccount();
    // With the log gone, the audit insert fails after the ledger entry was written.
    await sql`drop table audit_log`.execute((store as KyselyStore).db);
    await expect(commands.credits.grant({ accountId: account.id, amountMicros: 1_000_000, reason: 'r' }, OPERATOR)).rejects.toThrow();
    expect(await store.balanceOf(account.id)).toBe(0);
    expect(await store.listLedger(account.id)).toEqual([]);
  });

  it('records suspension, reactivation, tier and role with before and after, and nothing for a customer', async () => {
    const account = await newAccount();
    await commands.accounts.setStatus(account.id, 'suspended', OPERATOR);
    await commands.accounts.setStatus(account.id, 'active', OPERATOR);
    await commands.accounts.setTier(account.id, 'pro', OPERATOR);
    await commands.accounts.setRole(account.id, 'operator', { kind: 'cli', id: 'root' });
    await commands.accounts.setTier(account.id, 'free'); // the customer's own plan change
    const rows = (await store.listAudit({ limit: 10, targetId: account.id })).reverse();
    expect(rows.map((r) => [r.action, r.before, r.after])).toEqual([
      ['account.create', null, { email: account.email, tier: 'free', status: 'active', balance_micros: 0 }],
      ['account.suspend', { status: 'active' }, { status: 'suspended' }],
      ['account.reactivate', { status: 'suspended' }, { status: 'active' }],
      ['account.set_tier', { tier: 'free' }, { tier: 'pro' }],
      ['account.set_role', { role: 'customer' }, { role: 'operator' }],
    ]);
    expect(rows.map((r) => r.actor.kind)).toEqual(['admin_key', 'admin_key', 'admin_key', 'admin_key', 'cli']);
    expect((await store.findAccount(account.id))?.role).toBe('operator');
  });

  it('records key creation, changes and revocation, codes, and admin keys', async () => {
    const account = await newAccount();
    const { record } = await commands.keys.create(account.id, 'ci', undefined, OPERATOR);
    await commands.keys.update(record.id, { name: 'ci-2', controls: { rpm: 30, creditLimit: { amountMicros: 5_000_000, period: 'month' } } }, undefined, OPERATOR);
    await commands.keys.update(record.id, { name: 'ci-3' }, account.id); // the owner's own change: not an admin action
    await commands.keys.revoke(record.id, undefined, OPERATOR);
    const [code] = await commands.codes.create({ amountMicros: 2_000_000, count: 2, expiresAt: null }, OPERATOR);
    await commands.codes.disable(code!.record.id, OPERATOR);
    const admin = await commands.adminKeys.create('ops', ['read', 'credits'], OPERATOR);
    await commands.adminKeys.revoke(admin.record.id, OPERATOR);

    const rows = (await store.listAudit({ limit: 20, actorId: OPERATOR.id })).reverse();
    expect(rows.map((r) => `${r.action} ${r.target.kind}`)).toEqual([
      'account.create account',
      'key.create key',
      'key.update key',
      'key.revoke key',
      'codes.create code',
      'code.disable code',
      'admin_key.create admin_key',
      'admin_key.revoke admin_key',
    ]);
    expect(rows[2]).toMatchObject({
      before: { name: 'ci', rpm: null, credit_limit_micros: null },
      after: { name: 'ci-2', rpm: 30, credit_limit_micros: 5_000_000, credit_limit_period: 'month', expires_at: null },
    });
    expect(rows[3]).toMatchObject({ before: { revoked_at: null }, after: { account_id: account.id } });
    expect(rows[3]!.after!.revoked_at).toEqual(expect.any(String));
    expect(rows[4]!.after).toMatchObject({ amount_micros: 2_000_000, count: 2 });
    expect(rows[5]).toMatchObject({ before: { disabled_at: null } });
    expect(rows[6]!.after).toEqual({ name: 'ops', scopes: ['read', 'credits'] });
    expect((await store.findAdminKeyById(admin.record.id))?.revokedAt).toEqual(expect.any(String));
  });

  it('a disabled code no longer redeems, and a redeemed one cannot be disabled', async () => {
    const account = await newAccount();
    const [disabled, redeemed] = await commands.codes.create({ amountMicros: 1_000_000, count: 2, expiresAt: null }, OPERATOR);
    await commands.codes.disable(disabled!.record.id, OPERATOR);
    await expect(commands.credits.redeemCode(account.id, disabled!.code)).rejects.toMatchObject({ code: 'code_expired' });
    await commands.credits.redeemCode(account.id, redeemed!.code);
    await expect(commands.codes.disable(redeemed!.record.id, OPERATOR)).rejects.toEqual(new Refusal('code_redeemed'));
    expect(await store.balanceOf(account.id)).toBe(1_000_000);
  });

  it('pages the audit log back from the newest by id', async () => {
    const account = await newAccount();
    for (let i = 1; i <= 5; i++) await commands.credits.grant({ accountId: account.id, amountMicros: i, reason: `g${i}` }, OPERATOR);
    const first = await store.listAudit({ limit: 2, actorId: OPERATOR.id });
    const second = await store.listAudit({ limit: 2, actorId: OPERATOR.id, beforeId: first[1]!.id });
    expect([...first, ...second].map((r) => r.after!.reason)).toEqual(['g5', 'g4', 'g3', 'g2']);
  });
});
