// The daily rollups on SQLite and PostgreSQL: usage written through the store's usage path
// is read back from them by the dashboard's summary and the operator's report with the sums
// of the records themselves, and verifyUsage finds nothing until a difference is planted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { KyselyStore } from '../../src/store/kysely-store.js';
import type { Db } from '../../src/store/sql.js';
import type { UsageDifference } from '../../src/store/usage-data-store.js';
import type { Account, Store, UsageRecord } from '../../src/store/store.js';
import { STORE_BACKENDS as backends, type OpenedStore } from '../helpers/store-backends.js';
import { plainRecord } from '../helpers/usage-record.js';

const MARCH = { fromIso: '2026-03-01T00:00:00.000Z', untilIso: '2026-03-05T00:00:00.000Z' };

describe.each(backends)('usage rollups on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;
  const handles: Store[] = [];

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
  });

  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.close();
    await store.close();
    await opened.cleanup();
  });

  const signUp = (email: string, creditsMicros: number): Promise<Account> =>
    store.signUp({ email, name: null, tier: 'free', passwordHash: `scrypt$hash-of-${email}`, creditsMicros });

  async function newKey(accountId: string, name: string): Promise<string> {
    const key = generateApiKey();
    return (await store.createApiKey({ accountId, name, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour })).id;
  }

  /** The database behind a second handle, as another process would reach it. */
  function otherDb(): Db {
    const other = opened.openAnother();
    handles.push(other);
    if (!(other instanceof KyselyStore)) throw new Error('expected the Kysely store');
    return other.db;
  }

  /**
   * Three accounts over four days of March (and one record on each side of the range): two
   * models, statuses 200 and 500, every token kind, counted and reported, and an account
   * whose balance (500 micros) covers its first record, part of its second and none of its
   * third. Written one batch per day, with refusals beside them.
   */
  async function seed() {
    const [ada, bob, cam] = [await signUp('ada@example.test', 10_000_000), await signUp('bob@example.test', 10_000_000), await signUp('cam@example.test', 500)];
    const keys = { a1: await newKey(ada.id, 'ada one'), a2: await newKey(ada.id, 'ada two'), b: await newKey(bob.id, 'bob'), c: await newKey(cam.id, 'cam') };
    const members = new Map([
      [keys.a1, 'acct_memberone'],
      [keys.a2, 'acct_membertwo'],
    ]);
    let n = 0;
    const record = (account: Account, keyId: string, model: string, createdAt: string, costMicros: number, extra: Partial<UsageRecord> = {}): UsageRecord => {
      n++;
      return { ...plainRecord(account.id, costMicros, { keyId }), model, createdAt, promptTokens: 100 * n, completionTokens: n, memberId: members.get(keyId) ?? null, ...extra };
    };
    const before = record(ada, keys.a1, 'm-a', '2026-02-28T23:59:59.999Z', 50);
    const days = [
      [
        record(ada, keys.a1, 'm-a', '2026-03-01T00:00:00.000Z', 100, { cachedTokens: 20 }),
        record(ada, keys.a2, 'm-b', '2026-03-01T12:00:00.000Z', 200, { status: 500, reasoningTokens: 5 }),
        record(bob, keys.b, 'm-a', '2026-03-01T13:00:00.000Z', 300, { basis: 'counted' }),
      ],
      [
        record(ada, keys.a1, 'm-a', '2026-03-02T08:00:00.000Z', 400, { cacheWriteTokens: 30, cacheWrite1hTokens: 7 }),
        record(ada, keys.a1, 'm-b', '2026-03-02T09:00:00.000Z', 0, { status: 500 }),
        record(bob, keys.b, 'm-b', '2026-03-02T10:00:00.000Z', 600),
        record(cam, keys.c, 'm-a', '2026-03-02T11:00:00.000Z', 400),
        record(cam, keys.c, 'm-a', '2026-03-02T11:30:00.000Z', 2_000, { cachedTokens: 3 }),
      ],
      [
        record(ada, keys.a2, 'm-a', '2026-03-04T23:59:59.999Z', 700, { basis: 'counted', reasoningTokens: 11 }),
        record(cam, keys.c, 'm-b', '2026-03-04T01:00:00.000Z', 300),
      ],
    ];
    const after = record(ada, keys.a1, 'm-a', '2026-03-05T00:00:00.000Z', 800);
    await store.recordUsage([before]);
    for (const batch of days) await store.recordUsage(batch);
    await store.recordUsage([after]);
    // What cam could not pay: 1,900 of the second record (100 left), all of the third.
    const unpaid = new Map([
      [days[1]![4]!.id, 1_900],
      [days[2]![1]!.id, 300],
    ]);
    const inMarch = days.flat().map((r) => ({ ...r, shortfallMicros: unpaid.get(r.id) ?? 0 }));
    const stored = await store.listUsage(cam.id);
    expect(new Map(stored.map((r) => [r.id, r.shortfallMicros]))).toEqual(new Map(inMarch.filter((r) => r.accountId === cam.id).map((r) => [r.id, r.shortfallMicros])));

    const refusal = { path: '/v1/chat/completions', model: null, reason: 'rate_limited' };
    const refused = (id: string, account: Account, keyId: string, status: number, createdAt: string) => ({
      ...refusal,
      id,
      requestId: `req_${id}`,
      accountId: account.id,
      keyId,
      memberId: members.get(keyId) ?? null,
      status,
      createdAt,
    });
    await store.recordRefusals([
      refused('refused_1', ada, keys.a1, 429, '2026-02-28T10:00:00.000Z'),
      refused('refused_2', ada, keys.a1, 429, '2026-03-01T10:00:00.000Z'),
      refused('refused_3', ada, keys.a2, 500, '2026-03-02T10:00:00.000Z'),
    ]);
    await store.recordRefusals([refused('refused_4', bob, keys.b, 429, '2026-03-04T10:00:00.000Z')]);
    return { ada, bob, cam, keys, before, days, after, inMarch };
  }

  it("sums an account's days, models and keys from the rollups as its records add up, for the whole days of the range and one member", async () => {
    const { ada, inMarch } = await seed();
    const ada3 = inMarch.filter((r) => r.accountId === ada.id);
    const expected = (records: UsageRecord[]) => ({
      days: grouped(records, (r) => [dayOf(r)]).map(([[date], rs]) => ({ date: date!, ...totalsOf(rs) })),
      byModel: grouped(records, (r) => [dayOf(r), r.model]).map(([[date, model], rs]) => ({ date: date!, model: model!, ...totalsOf(rs) })),
      byKey: grouped(records, (r) => [dayOf(r), r.keyId]).map(([[date, keyId], rs]) => ({ date: date!, keyId: keyId!, ...totalsOf(rs) })),
    });
    const summary = await store.summarizeUsage(ada.id, MARCH);
    expect(summary).toEqual(expected(ada3));
    expect(summary.days.map((d) => d.date)).toEqual(['2026-03-01', '2026-03-02', '2026-03-04']);
    expect(summary.days.reduce((sum, d) => sum + d.costMicros, 0)).toBe(100 + 200 + 400 + 0 + 700);

    const memberOne = await store.summarizeUsage(ada.id, MARCH, { memberId: 'acct_memberone' });
    expect(memberOne).toEqual(expected(ada3.filter((r) => r.memberId === 'acct_memberone')));
    expect(memberOne.byKey.every((row) => row.keyId === ada3[0]!.keyId)).toBe(true);

    // A range within days is answered with those whole days: a day's rollup cannot be cut.
    expect(await store.summarizeUsage(ada.id, { fromIso: '2026-03-01T12:00:00.000Z', untilIso: '2026-03-04T00:00:00.001Z' })).toEqual(summary);
    expect(await store.summarizeUsage(ada.id, { fromIso: '2026-03-02T00:00:00.000Z', untilIso: '2026-03-03T00:00:00.000Z' })).toEqual(
      expected(ada3.filter((r) => dayOf(r) === '2026-03-02')),
    );
    expect(await store.summarizeUsage(ada.id, { fromIso: '2026-03-02T06:00:00.000Z', untilIso: '2026-03-02T06:00:00.000Z' })).toEqual({ days: [], byModel: [], byKey: [] });
    expect(await store.summarizeUsage(ada.id, { fromIso: '2027-01-01T00:00:00.000Z', untilIso: '2027-01-02T00:00:00.000Z' })).toEqual({ days: [], byModel: [], byKey: [] });
  });

  it("reports every account's usage from the rollups, tokens by kind and unpaid included, with refusals by status", async () => {
    const { ada, bob, cam, keys, inMarch } = await seed();
    const report = await store.reportUsage(MARCH);
    expect(report.days).toEqual(grouped(inMarch, (r) => [dayOf(r)]).map(([[date], rs]) => ({ date: date!, ...reportTotalsOf(rs) })));
    const byCost = <T extends { costMicros: number }>(rows: T[], name: (row: T) => string) =>
      rows.sort((a, b) => b.costMicros - a.costMicros || (name(a) < name(b) ? -1 : 1));
    expect(report.byModel).toEqual(byCost(grouped(inMarch, (r) => [r.model]).map(([[model], rs]) => ({ model: model!, ...reportTotalsOf(rs) })), (row) => row.model));
    const emails = new Map([ada, bob, cam].map((a) => [a.id, a.email]));
    expect(report.byAccount).toEqual(
      byCost(grouped(inMarch, (r) => [r.accountId]).map(([[accountId], rs]) => ({ accountId: accountId!, email: emails.get(accountId!)!, ...reportTotalsOf(rs) })), (row) => row.accountId),
    );
    const names = new Map([
      [keys.a1, 'ada one'],
      [keys.a2, 'ada two'],
      [keys.b, 'bob'],
      [keys.c, 'cam'],
    ]);
    expect(report.byKey).toEqual(
      byCost(
        grouped(inMarch, (r) => [r.keyId, r.accountId]).map(([[keyId, accountId], rs]) => ({ keyId: keyId!, keyName: names.get(keyId!)!, accountId: accountId!, ...reportTotalsOf(rs) })),
        (row) => row.keyId,
      ),
    );
    const served = (status: number) => inMarch.filter((r) => r.status === status).length;
    expect(report.byStatus).toEqual([
      { status: 200, requests: served(200), refused: 0 },
      { status: 429, requests: 2, refused: 2 },
      { status: 500, requests: served(500) + 1, refused: 1 },
    ]);
    const totals = reportTotalsOf(inMarch);
    expect(totals).toMatchObject({ unpaidMicros: 2_200, countedRequests: 2, cachedTokens: 23, cacheWriteTokens: 37, reasoningTokens: 16 });
    expect(report.creditsAdded).toEqual([]);

    const camOnly = await store.reportUsage(MARCH, { accountId: cam.id });
    expect(camOnly.byAccount).toEqual([{ accountId: cam.id, email: cam.email, ...reportTotalsOf(inMarch.filter((r) => r.accountId === cam.id)) }]);
    expect(camOnly.byStatus).toEqual([{ status: 200, requests: 3, refused: 0 }]);

    // Credits added stay read from the ledger: the sign-up grants, today.
    const today = new Date().toISOString().slice(0, 10);
    const todays = await store.reportUsage({ fromIso: `${today}T00:00:00.000Z`, untilIso: new Date(Date.parse(`${today}T00:00:00.000Z`) + 86_400_000).toISOString() });
    expect(todays.creditsAdded).toEqual([{ date: today, soldMicros: 0, redeemedMicros: 0, grantedMicros: 20_000_500 }]);
  });

  it('verifies consistent rollups and ledger with no difference, and names the day, account and field of each planted one', async () => {
    const { ada, bob, cam, keys, days } = await seed();
    const all = { fromIso: '2026-01-01T00:00:00.000Z', untilIso: '2026-04-01T00:00:00.000Z' };
    expect(await store.verifyUsage(all)).toEqual([]);

    const db = otherDb();
    await db
      .updateTable('usage_daily')
      .set((eb) => ({ cost_micros: eb('cost_micros', '+', 7) }))
      .where('account_id', '=', ada.id)
      .where('day', '=', '2026-03-02')
      .where('key_id', '=', keys.a1)
      .where('model', '=', 'm-a')
      .where('status', '=', 200)
      .execute();
    await db.deleteFrom('ledger_entries').where('reference', '=', days[1]![2]!.id).execute();
    await db.deleteFrom('refusal_daily').where('account_id', '=', ada.id).where('day', '=', '2026-03-02').execute();
    const rollup = { key_id: keys.c, model: 'm-a', status: 200, member_id: null, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cache_write_tokens: 0 };
    const more = { cache_write_1h_tokens: 0, reasoning_tokens: 0, counted_requests: 0, cost_micros: 0, shortfall_micros: 0 };
    // A day with rollups and no raw rows, after the oldest raw row: the raw rows went missing.
    await db.insertInto('usage_daily').values({ account_id: cam.id, day: '2026-03-03', requests: 3, ...rollup, ...more }).execute();
    // Before the oldest raw row (2026-02-28): past the retention, nothing to check against.
    await db.insertInto('usage_daily').values({ account_id: cam.id, day: '2026-02-01', requests: 9, ...rollup, ...more }).execute();
    // On the oldest day a rollup above its raw rows may be a day cut by the retention.
    await db.updateTable('refusal_daily').set((eb) => ({ requests: eb('requests', '+', 1) })).where('day', '=', '2026-02-28').execute();

    // The rows planted in usage_daily also part it from the rollups across accounts, which
    // are checked against it (usage-top.test.ts plants differences there); here, the days'.
    const ofDays = (differences: UsageDifference[]) => differences.filter((d) => !d.group?.startsWith('usage_'));
    const everything = await store.verifyUsage(all);
    const month = everything.find((d) => d.group === 'usage_accounts_monthly' && d.accountId === ada.id && d.field === 'cost_micros');
    expect(month).toMatchObject({ day: '2026-03-01' });
    expect(month!.expected - month!.actual).toBe(7);
    const found = ofDays(everything);
    expect(found).toHaveLength(4);
    expect(found).toEqual(
      expect.arrayContaining([
        { kind: 'rollup', day: '2026-03-02', accountId: ada.id, group: `${keys.a1} m-a 200`, field: 'cost_micros', expected: 400, actual: 407 },
        { kind: 'ledger', day: '2026-03-02', accountId: bob.id, field: 'charged_micros', expected: 0, actual: 600 },
        { kind: 'rollup', day: '2026-03-02', accountId: ada.id, group: `${keys.a2} 500 refused`, field: 'requests', expected: 1, actual: 0 },
        { kind: 'rollup', day: '2026-03-03', accountId: cam.id, group: `${keys.c} m-a 200`, field: 'requests', expected: 0, actual: 3 },
      ]),
    );
    expect(found.map((d) => d.day)).toEqual(['2026-03-02', '2026-03-02', '2026-03-02', '2026-03-03']);
    // Only the days the range touches are checked.
    expect(ofDays(await store.verifyUsage({ fromIso: '2026-03-04T00:00:00.000Z', untilIso: '2026-03-05T00:00:00.000Z' }))).toEqual([]);
    expect(ofDays(await store.verifyUsage({ fromIso: '2026-03-03T00:00:00.000Z', untilIso: '2026-03-04T00:00:00.000Z' }))).toEqual([found[3]]);

    // A rollup short of the oldest day's raw rows is reported all the same.
    await db.updateTable('usage_daily').set((eb) => ({ prompt_tokens: eb('prompt_tokens', '-', 1) })).where('day', '=', '2026-02-28').execute();
    expect(ofDays(await store.verifyUsage({ fromIso: '2026-02-28T00:00:00.000Z', untilIso: '2026-03-01T00:00:00.000Z' }))).toEqual([
      { kind: 'rollup', day: '2026-02-28', accountId: ada.id, group: `${keys.a1} m-a 200`, field: 'prompt_tokens', expected: 100, actual: 99 },
    ]);
  });
});

function dayOf(record: UsageRecord): string {
  return record.createdAt.slice(0, 10);
}

/** Records grouped by `keyOf`, groups in the order of their keys (as SQL orders text by code point here). */
function grouped(records: UsageRecord[], keyOf: (record: UsageRecord) => string[]): [string[], UsageRecord[]][] {
  const groups = new Map<string, [string[], UsageRecord[]]>();
  for (const record of records) {
    const key = keyOf(record);
    const group = groups.get(JSON.stringify(key)) ?? [key, []];
    group[1].push(record);
    groups.set(JSON.stringify(key), group);
  }
  return [...groups.values()].sort(([a], [b]) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

function totalsOf(records: UsageRecord[]) {
  const sum = (value: (r: UsageRecord) => number) => records.reduce((total, r) => total + value(r), 0);
  return { requests: records.length, promptTokens: sum((r) => r.promptTokens), completionTokens: sum((r) => r.completionTokens), costMicros: sum((r) => r.costMicros) };
}

function reportTotalsOf(records: UsageRecord[]) {
  const sum = (value: (r: UsageRecord) => number) => records.reduce((total, r) => total + value(r), 0);
  return {
    ...totalsOf(records),
    cachedTokens: sum((r) => r.cachedTokens),
    cacheWriteTokens: sum((r) => r.cacheWriteTokens + r.cacheWrite1hTokens),
    reasoningTokens: sum((r) => r.reasoningTokens),
    countedRequests: records.filter((r) => r.basis === 'counted').length,
    unpaidMicros: sum((r) => r.shortfallMicros),
  };
}
