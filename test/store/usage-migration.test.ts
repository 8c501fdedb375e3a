// Migration 0020 from a store at 0019 holding usage, refusals and money over several months:
// every balance, ledger sum, record and total is the same after it, the rollups it filled
// agree with the rows, and the store writes as before (on PostgreSQL into monthly partitions).
import { Migrator, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newTimeOrderedId } from '../../src/ids.js';
import type { KyselyStore } from '../../src/store/kysely-store.js';
import { MIGRATION_NAMES, migrationProvider } from '../../src/store/migrations/index.js';
import type { RefusedRequest } from '../../src/store/request-log-store.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { toUsageRow } from '../../src/store/usage-rows.js';
import { kyselyOf, STORE_BACKENDS, type OpenedStore } from '../helpers/store-backends.js';
import { plainRecord } from '../helpers/usage-record.js';

// Three months apart, the last one now: three partitions on PostgreSQL, and one day twice.
const TIMES = ['2025-10-03T23:59:59.999Z', '2025-10-04T00:00:00.000Z', '2025-12-31T12:00:00.000Z', new Date().toISOString()];
const RANGE = { fromIso: '2025-01-01T00:00:00.000Z', untilIso: new Date(Date.now() + 86_400_000).toISOString() };

describe.each(STORE_BACKENDS)('migration 0020 (usage at scale) on $name', (backend) => {
  let opened: OpenedStore;
  let store: KyselyStore;

  beforeEach(async () => {
    opened = await backend.open();
    store = kyselyOf(opened);
    await new Migrator({ db: store.db, provider: migrationProvider }).migrateTo('0019_org_invitations');
  });

  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  /** Usage and refusals written the way 0019's store wrote them: rows, a usage charge each, the balance debited. */
  async function seed(): Promise<{ accounts: string[]; records: UsageRecord[]; refusals: RefusedRequest[] }> {
    const accounts: string[] = [];
    const records: UsageRecord[] = [];
    for (const [n, email] of ['a@example.test', 'b@example.test'].entries()) {
      const account = await store.createAccount({ email, tier: 'free' });
      accounts.push(account.id);
      await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 10_000_000 });
      for (const [i, createdAt] of TIMES.entries()) {
        const record = { ...plainRecord(account.id, 1_000 * (i + 1) + n, { keyId: `key_${n}_${i % 2}` }), createdAt, status: i === 2 ? 500 : 200 };
        // One record whose charge was cut at the balance: the ledger has cost less shortfall.
        if (i === 1) Object.assign(record, { shortfallMicros: 300, basis: 'counted', cachedTokens: 4, reasoningTokens: 2 });
        records.push(record);
        await store.db.insertInto('usage_records').values(toUsageRow(record)).execute();
        await store.appendLedgerEntry({ accountId: account.id, kind: 'usage', amountMicros: -(record.costMicros - record.shortfallMicros), reference: record.id });
      }
    }
    const refusals = TIMES.map((createdAt, i): RefusedRequest => ({
      id: newTimeOrderedId('refused'), requestId: `req_r${i}`, accountId: accounts[0]!, keyId: 'key_0_0', memberId: null,
      model: 'test-model', path: '/v1/chat/completions', status: i % 2 === 0 ? 429 : 402, reason: 'rate_limited', createdAt,
    }));
    for (const r of refusals) {
      await store.db
        .insertInto('refused_requests')
        .values({ id: r.id, request_id: r.requestId, account_id: r.accountId, key_id: r.keyId, member_id: null, model: r.model, path: r.path, status: r.status, reason: r.reason, created_at: r.createdAt })
        .execute();
    }
    return { accounts, records, refusals };
  }

  async function moneyOf(s: Store, accounts: readonly string[]): Promise<unknown[]> {
    return Promise.all(accounts.map(async (id) => ({ balance: await s.balanceOf(id), ledger: await s.sumLedger(id), entries: (await s.listLedger(id)).length })));
  }

  it('keeps every balance, ledger sum and record, and fills rollups that agree with them', async () => {
    const { accounts, records, refusals } = await seed();
    const before = await moneyOf(store, accounts);
    const usageBefore = await Promise.all(accounts.map((id) => store.listUsage(id)));

    expect(await store.migrate()).toEqual(MIGRATION_NAMES.filter((name) => name >= '0020'));

    expect(await moneyOf(store, accounts)).toEqual(before);
    // Records read back field for field, times included (timestamptz on PostgreSQL).
    expect(await Promise.all(accounts.map((id) => store.listUsage(id)))).toEqual(usageBefore);
    expect(usageBefore.flat()).toHaveLength(records.length);
    expect(await store.verifyUsage(RANGE)).toEqual([]);

    // The rollups give the rows' totals, day by day, capped shortfall and token kinds included.
    const report = await store.reportUsage(RANGE, {});
    const sum = (pick: (r: UsageRecord) => number) => records.reduce((total, r) => total + pick(r), 0);
    const totals = report.days.reduce(
      (t, d) => ({ requests: t.requests + d.requests, cost: t.cost + d.costMicros, unpaid: t.unpaid + d.unpaidMicros, cached: t.cached + d.cachedTokens, counted: t.counted + d.countedRequests }),
      { requests: 0, cost: 0, unpaid: 0, cached: 0, counted: 0 },
    );
    expect(totals).toEqual({ requests: records.length, cost: sum((r) => r.costMicros), unpaid: 600, cached: 8, counted: 2 });
    expect(report.days.map((d) => d.date)).toEqual([...new Set(TIMES.map((t) => t.slice(0, 10)))].sort());
    expect(report.byStatus).toEqual(
      expect.arrayContaining([
        { status: 402, requests: 2, refused: 2 },
        { status: 429, requests: 2, refused: 2 },
      ]),
    );
    const log = await store.listRequestLog(accounts[0]!, { sinceIso: RANGE.fromIso, limit: 100 });
    expect(log.filter((entry) => entry.refused).map((entry) => entry.id).sort()).toEqual(refusals.map((r) => r.id).sort());
  });

  it('writes, charges and rolls up as before afterwards, in months old and new', async () => {
    const { accounts } = await seed();
    await store.migrate();
    const balance = await store.balanceOf(accounts[0]!);
    const later = [
      plainRecord(accounts[0]!, 500),
      { ...plainRecord(accounts[0]!, 700), createdAt: '2025-10-05T08:00:00.000Z' },
      // A month no partition was made for: the write makes it.
      { ...plainRecord(accounts[0]!, 900), createdAt: '2024-02-29T10:00:00.000Z' },
    ];
    await store.recordUsage(later);
    // A retried batch is neither stored nor charged twice.
    await store.recordUsage(later);
    expect(await store.balanceOf(accounts[0]!)).toBe(balance - 2_100);
    expect(await store.sumLedger(accounts[0]!)).toBe(balance - 2_100);
    expect(await store.verifyUsage({ fromIso: '2024-01-01T00:00:00.000Z', untilIso: RANGE.untilIso })).toEqual([]);
    const leap = await store.summarizeUsage(accounts[0]!, { fromIso: '2024-02-29T00:00:00.000Z', untilIso: '2024-03-01T00:00:00.000Z' });
    expect(leap.days).toEqual([{ date: '2024-02-29', requests: 1, promptTokens: 10, completionTokens: 10, costMicros: 900 }]);
    if (backend.name === 'postgres') {
      const { rows } = await sql<{ name: string }>`select child.relname as name from pg_inherits join pg_class child on child.oid = pg_inherits.inhrelid
        join pg_class parent on parent.oid = pg_inherits.inhparent where parent.relname = 'usage_records' order by 1`.execute(store.db);
      expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(['usage_records_p2024_02', 'usage_records_p2025_10', 'usage_records_p2025_12']));
      const { rows: types } = await sql<{ type: string }>`select data_type as type from information_schema.columns where table_name = 'usage_records' and column_name = 'created_at'`.execute(store.db);
      expect(types[0]?.type).toBe('timestamp with time zone');
    }
  });

  it('drops raw records past the retention, keeping rollups, the ledger and every balance', async () => {
    const { accounts } = await seed();
    await store.migrate();
    const before = await moneyOf(store, accounts);
    const reportBefore = await store.reportUsage(RANGE, {});
    // Everything before 2025-12: October's and November's partitions go whole on PostgreSQL.
    const pruned = await store.pruneUsage('2025-12-01T00:00:00.000Z');
    expect(pruned).toEqual(
      backend.name === 'postgres' ? { partitionsDropped: ['usage_records_p2025_10', 'usage_records_p2025_11'], rowsDeleted: 0 } : { partitionsDropped: [], rowsDeleted: 4 },
    );
    expect((await store.listUsage(accounts[0]!)).map((r) => r.createdAt)).toEqual([TIMES[3], TIMES[2]]);
    expect(await moneyOf(store, accounts)).toEqual(before);
    // Charts keep the days whose raw rows are gone; verify skips them rather than calling them wrong.
    expect(await store.reportUsage(RANGE, {})).toEqual(reportBefore);
    expect(await store.verifyUsage(RANGE)).toEqual([]);
    // A cut inside a month deletes rows in batches, and a record written late for a dropped month still lands.
    const mid = await store.pruneUsage('2025-12-31T12:00:00.001Z');
    expect(mid).toEqual({ partitionsDropped: [], rowsDeleted: 2 });
    await store.recordUsage([{ ...plainRecord(accounts[0]!, 5), createdAt: '2025-10-06T00:00:00.000Z' }]);
    expect((await store.listUsage(accounts[0]!)).map((r) => r.createdAt)).toEqual([TIMES[3], '2025-10-06T00:00:00.000Z']);
  });
});
