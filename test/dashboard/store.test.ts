// The store methods behind the dashboard, on SQLite and PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { EmailTakenError, type Account, type Store, type UsageRecord } from '../../src/store/store.js';
import { STORE_BACKENDS as backends, type OpenedStore } from '../helpers/store-backends.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';

describe.each(backends)('the dashboard store on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
  });

  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  const signUp = (email: string, creditsMicros = 0): Promise<Account> =>
    store.signUp({ email, name: null, tier: 'free', passwordHash: `scrypt$hash-of-${email}`, creditsMicros });

  async function newKey(accountId: string, name: string): Promise<string> {
    const key = generateApiKey();
    return (await store.createApiKey({ accountId, name, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour })).id;
  }

  it('signs up an account with its password and credits in one go; a taken email (any case) throws EmailTakenError', async () => {
    const account = await signUp('Ada@Example.test', 5_000_000);
    expect(account.email).toBe('ada@example.test');
    expect(await store.findPasswordHash(account.id)).toBe('scrypt$hash-of-Ada@Example.test');
    expect(await store.balanceOf(account.id)).toBe(5_000_000);
    expect(await store.sumLedger(account.id)).toBe(5_000_000);
    await expect(signUp('ADA@example.test')).rejects.toBeInstanceOf(EmailTakenError);
    expect(await store.listAccounts()).toHaveLength(1);
  });

  it('of concurrent sign-ups with one email exactly one wins, leaving no half-made account', async () => {
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => signUp(i % 2 ? 'race@example.test' : 'RACE@example.test', 1_000)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(EmailTakenError);
    const [account] = await store.listAccounts();
    expect(await store.balanceOf(account!.id)).toBe(1_000);
    expect(await store.listLedger(account!.id)).toHaveLength(1);
  });

  it('sets a password for an account that had none (created by the CLI) and replaces it later', async () => {
    const account = await store.createAccount({ email: 'cli@example.test', tier: 'free' });
    expect(await store.findPasswordHash(account.id)).toBeUndefined();
    await store.setPasswordHash(account.id, 'scrypt$first');
    await store.setPasswordHash(account.id, 'scrypt$second');
    expect(await store.findPasswordHash(account.id)).toBe('scrypt$second');
  });

  it('keeps sessions until deleted: one, all but one of an account, or the expired ones', async () => {
    const [ada, bob] = [await signUp('ada@example.test'), await signUp('bob@example.test')];
    const session = (tokenHash: string, accountId: string, expiresAt: string) => ({
      tokenHash,
      accountId,
      csrfToken: `csrf-${tokenHash}`,
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt,
      lastSeenAt: '2026-01-01T00:00:00.000Z',
      authMethod: 'password' as const,
      orgId: null,
    });
    await store.createSession(session('a1', ada.id, '2099-01-01T00:00:00.000Z'));
    await store.createSession(session('a2', ada.id, '2099-01-01T00:00:00.000Z'));
    await store.createSession(session('a3', ada.id, '2020-01-01T00:00:00.000Z'));
    await store.createSession(session('b1', bob.id, '2099-01-01T00:00:00.000Z'));
    expect(await store.findSession('a1')).toEqual(session('a1', ada.id, '2099-01-01T00:00:00.000Z'));

    await store.touchSession('a1', '2026-02-01T00:00:00.000Z');
    expect((await store.findSession('a1'))!.lastSeenAt).toBe('2026-02-01T00:00:00.000Z');

    await store.deleteExpiredSessions('2026-06-01T00:00:00.000Z');
    expect(await store.findSession('a3')).toBeUndefined();
    await store.deleteOtherSessions(ada.id, 'a1');
    expect(await store.findSession('a1')).toBeDefined();
    expect(await store.findSession('a2')).toBeUndefined();
    expect(await store.findSession('b1')).toBeDefined();
    await store.deleteSession('a1');
    expect(await store.findSession('a1')).toBeUndefined();
  });

  it("revokes an account's own key once, with one change event, and never another account's", async () => {
    const [ada, bob] = [await signUp('ada@example.test'), await signUp('bob@example.test')];
    const adaKey = await newKey(ada.id, 'ada');
    const before = await store.latestChangeId();
    expect(await store.revokeAccountKey(bob.id, adaKey)).toBeUndefined();
    expect((await store.findKeyById(adaKey))!.revokedAt).toBeNull();
    expect(await store.changesAfter(before)).toEqual([]);

    const revoked = await store.revokeAccountKey(ada.id, adaKey);
    expect(revoked).toMatchObject({ id: adaKey, revokedAt: expect.any(String) });
    expect((await store.changesAfter(before)).map((e) => [e.kind, e.subjectId])).toEqual([['key', adaKey]]);
    const again = await store.revokeAccountKey(ada.id, adaKey);
    expect(again!.revokedAt).toBe(revoked!.revokedAt);
    expect(await store.changesAfter(before)).toHaveLength(1);
  });

  it('sums usage per UTC day, per day and model, per day and key, within the half-open range and the account', async () => {
    const [ada, bob] = [await signUp('ada@example.test', 10_000_000), await signUp('bob@example.test', 10_000_000)];
    const [k1, k2] = [await newKey(ada.id, 'one'), await newKey(ada.id, 'two')];
    const bobKey = await newKey(bob.id, 'bob');
    let n = 0;
    const record = (accountId: string, keyId: string, model: string, createdAt: string, cost: number): UsageRecord => ({
      id: `usage_test${++n}`,
      requestId: `req_${n}`,
      accountId,
      keyId,
      model,
      promptTokens: 10 * n,
      ...PLAIN_USAGE,
      completionTokens: n,
      costMicros: cost,
      latencyMs: 5,
      status: 200,
      streamed: false,
      finishReason: 'stop',
      memberId: null,
      createdAt,
    });
    await store.recordUsage([
      record(ada.id, k1, 'm-a', '2026-03-01T00:00:00.000Z', 100), // 1
      record(ada.id, k2, 'm-a', '2026-03-01T23:59:59.999Z', 200), // 2
      record(ada.id, k1, 'm-b', '2026-03-01T12:00:00.000Z', 300), // 3
      record(ada.id, k1, 'm-a', '2026-03-03T08:00:00.000Z', 400), // 4
      record(ada.id, k1, 'm-a', '2026-03-04T00:00:00.000Z', 500), // 5: at the end, excluded
      record(ada.id, k1, 'm-a', '2026-02-28T23:59:59.999Z', 600), // 6: before the start
      record(bob.id, bobKey, 'm-a', '2026-03-01T10:00:00.000Z', 700), // 7: another account
    ]);
    const summary = await store.summarizeUsage(ada.id, { fromIso: '2026-03-01T00:00:00.000Z', untilIso: '2026-03-04T00:00:00.000Z' });
    expect(summary.days).toEqual([
      { date: '2026-03-01', requests: 3, promptTokens: 60, completionTokens: 6, costMicros: 600 },
      { date: '2026-03-03', requests: 1, promptTokens: 40, completionTokens: 4, costMicros: 400 },
    ]);
    expect(summary.byModel).toEqual([
      { date: '2026-03-01', model: 'm-a', requests: 2, promptTokens: 30, completionTokens: 3, costMicros: 300 },
      { date: '2026-03-01', model: 'm-b', requests: 1, promptTokens: 30, completionTokens: 3, costMicros: 300 },
      { date: '2026-03-03', model: 'm-a', requests: 1, promptTokens: 40, completionTokens: 4, costMicros: 400 },
    ]);
    const key1 = { date: '2026-03-01', keyId: k1, requests: 2, promptTokens: 40, completionTokens: 4, costMicros: 400 };
    const key2 = { date: '2026-03-01', keyId: k2, requests: 1, promptTokens: 20, completionTokens: 2, costMicros: 200 };
    expect(summary.byKey).toEqual([
      ...[key1, key2].sort((a, b) => (a.keyId < b.keyId ? -1 : 1)),
      { date: '2026-03-03', keyId: k1, requests: 1, promptTokens: 40, completionTokens: 4, costMicros: 400 },
    ]);
    const listed = await store.listUsage(ada.id, { sinceIso: '2026-03-01T00:00:00.000Z', untilIso: '2026-03-04T00:00:00.000Z' });
    expect(listed.map((r) => r.requestId)).toEqual(['req_4', 'req_2', 'req_3', 'req_1']);
    expect(await store.summarizeUsage(ada.id, { fromIso: '2027-01-01T00:00:00.000Z', untilIso: '2027-01-02T00:00:00.000Z' })).toEqual({
      days: [],
      byModel: [],
      byKey: [],
    });
  });

  it('redeems a code once; tells unknown, expired (at its expiry time) and already redeemed apart', async () => {
    const ada = await signUp('ada@example.test');
    const [live, expiring] = await store.createRedemptionCodes([
      { codeHash: 'h-live', hint: 'LMG-…-LIVE', amountMicros: 2_000_000, expiresAt: null },
      { codeHash: 'h-expiring', hint: 'LMG-…-EXPI', amountMicros: 1_000_000, expiresAt: '2026-05-01T00:00:00.000Z' },
    ]);
    expect(await store.redeemCode(ada.id, 'h-none', '2026-04-01T00:00:00.000Z')).toEqual({ outcome: 'unknown' });
    expect(await store.redeemCode(ada.id, 'h-expiring', '2026-05-01T00:00:00.000Z')).toEqual({ outcome: 'expired' });
    expect(await store.redeemCode(ada.id, 'h-live', '2026-04-01T00:00:00.000Z')).toEqual({
      outcome: 'redeemed',
      codeId: live!.id,
      amountMicros: 2_000_000,
      balanceMicros: 2_000_000,
    });
    expect(await store.redeemCode(ada.id, 'h-live', '2026-04-01T00:00:01.000Z')).toEqual({ outcome: 'already_redeemed' });
    expect(await store.redeemCode(ada.id, 'h-expiring', '2026-04-30T23:59:59.999Z')).toMatchObject({ outcome: 'redeemed', balanceMicros: 3_000_000 });
    expect(await store.sumLedger(ada.id)).toBe(3_000_000);
    const codes = await store.listRedemptionCodes();
    expect(codes.map((c) => c.id).sort()).toEqual([live!.id, expiring!.id].sort());
    expect(codes.find((c) => c.id === live!.id)).toMatchObject({ redeemedBy: ada.id, redeemedAt: '2026-04-01T00:00:00.000Z', amountMicros: 2_000_000 });
  });
});
