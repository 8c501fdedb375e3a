// Migration 0022 from a store at 0021 written through the commands (accounts, keys, credits,
// codes, a complimentary plan, sessions, admin keys, usage and its ledger): every row of
// every table reads back the same after it, every balance and ledger sum too, and on
// PostgreSQL no moment is left as text. A value that is not a moment fails the migration,
// which then changes nothing.
import { Migrator, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateRedemptionCode, hashRedemptionCode } from '../../src/billing/redemption-code.js';
import { Commands } from '../../src/commands/commands.js';
import type { KyselyStore } from '../../src/store/kysely-store.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import type { Db } from '../../src/store/sql.js';
import { toUsageRow } from '../../src/store/usage-rows.js';
import { kyselyOf, STORE_BACKENDS, type OpenedStore } from '../helpers/store-backends.js';
import { allRows } from '../helpers/store-rows.js';
import { plainRecord } from '../helpers/usage-record.js';

const CLI = { kind: 'cli', id: 'test' } as const;
// A day's last millisecond and the next day's first, next month (PostgreSQL has its
// partition already): the report must cut them apart in UTC.
const NEXT_MONTH = (() => {
  const at = new Date();
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString().slice(0, 8);
})();
const LATE = `${NEXT_MONTH}01T23:59:59.999Z`;
const EARLY = `${NEXT_MONTH}02T00:00:00.000Z`;
const UNTIL = `${NEXT_MONTH}28T00:00:00.000Z`;

describe.each(STORE_BACKENDS)('migration 0022 (typed time) on $name', (backend) => {
  let opened: OpenedStore;
  let store: KyselyStore;

  beforeEach(async () => {
    opened = await backend.open();
    store = kyselyOf(opened);
    const { error } = await new Migrator({ db: store.db, provider: migrationProvider }).migrateTo('0021_usage_operator_rollups');
    if (error) throw error;
  });

  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  /** A store as 0021's code left it, through the commands; usage rows and ledger charges as its batch wrote them (the rollups are not this migration's). */
  async function seed(): Promise<string[]> {
    const commands = new Commands(store);
    const { account: ada } = await commands.accounts.create({ email: 'ada@example.com', name: 'Ada', tier: 'free', creditsMicros: 50_000_000, creditsReason: 'welcome' });
    const { account: bob } = await commands.accounts.create({ email: 'bob@example.com', name: null, tier: 'free', creditsMicros: 0, creditsReason: '' });
    await commands.accounts.setTier(bob.id, 'pro', CLI, { until: '2099-01-31T00:00:00.000Z' });
    const key = await commands.keys.create(ada.id, 'laptop', { expiresAt: '2099-06-01T00:00:00.000Z', allowedModels: null, allowedIps: null, rpm: null, creditLimit: null });
    const old = await commands.keys.create(ada.id, 'old laptop');
    await commands.keys.revoke(old.record.id);
    await store.touchKeys(new Map([[key.record.id, '2026-02-01T10:00:00.123Z']]));
    const code = generateRedemptionCode();
    await store.createRedemptionCodes([{ codeHash: hashRedemptionCode(code), hint: 'LMG-…-AAAA', amountMicros: 5_000_000, expiresAt: '2099-12-31T23:59:59.999Z' }]);
    await commands.credits.redeemCode(bob.id, code);
    await commands.adminKeys.create('ops', ['read'], CLI);
    const org = await commands.orgs.create('Lab', ada, 'free', CLI);
    await commands.orgs.setMember(org.id, bob, 'member', CLI);
    const endpoint = await commands.webhooks.add(ada.id, 'https://hooks.example.com/lmgate', ['key.revoked']);
    await commands.webhooks.rotate(endpoint.endpoint.id);
    await commands.webhooks.sendTest(endpoint.endpoint.id);
    await store.createSession({
      tokenHash: 'a'.repeat(64), accountId: ada.id, csrfToken: 'c'.repeat(64), createdAt: '2026-03-02T08:00:00.000Z',
      expiresAt: '2099-03-02T08:00:00.000Z', lastSeenAt: '2026-03-02T09:30:00.000Z', authMethod: 'password', orgId: null,
    });
    for (const [i, createdAt] of [LATE, EARLY, new Date().toISOString()].entries()) {
      const record = { ...plainRecord(ada.id, 1_000 * (i + 1), { keyId: key.record.id }), createdAt };
      await store.db.insertInto('usage_records').values(toUsageRow(record)).execute();
      await store.appendLedgerEntry({ accountId: ada.id, kind: 'usage', amountMicros: -record.costMicros, reference: record.id });
    }
    // Credits added on either side of midnight, dated as the ledger dates them.
    for (const createdAt of [LATE, EARLY]) {
      await store.db.insertInto('ledger_entries').values({ account_id: bob.id, kind: 'grant', amount_micros: 700, reason: 'edge', reference: null, created_at: createdAt }).execute();
    }
    return [ada.id, bob.id];
  }

  async function textMoments(db: Db): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`
      select c.table_name || '.' || c.column_name as name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema() and t.table_type = 'BASE TABLE' and c.data_type = 'character varying'
        and (c.column_name like '%\\_at' or c.column_name like '%\\_until' or c.column_name like '%\\_end')
      order by 1`.execute(db);
    return rows.map((row) => row.name);
  }

  it('reads every row back the same, keeps every balance, and types every moment on PostgreSQL', async () => {
    const accounts = await seed();
    const before = await allRows(store.db);
    const money = await Promise.all(accounts.map(async (id) => [await store.balanceOf(id), await store.sumLedger(id)]));
    if (backend.name === 'postgres') expect(await textMoments(store.db)).toContain('ledger_entries.created_at');

    expect(await store.migrate()).toEqual(['0022_typed_time']);

    expect(await allRows(store.db)).toEqual(before);
    expect(await Promise.all(accounts.map(async (id) => [await store.balanceOf(id), await store.sumLedger(id)]))).toEqual(money);
    if (backend.name === 'postgres') expect(await textMoments(store.db)).toEqual([]);
    // The credits added are cut into UTC days from the typed column.
    const report = await store.reportUsage({ fromIso: `${NEXT_MONTH}01T00:00:00.000Z`, untilIso: UNTIL });
    expect(report.creditsAdded.map((day) => [day.date, day.grantedMicros])).toEqual([
      [LATE.slice(0, 10), 700],
      [EARLY.slice(0, 10), 700],
    ]);
    // And the store writes as before: a usage batch with its ledger charges.
    const balance = await store.balanceOf(accounts[0]!);
    await store.recordUsage([plainRecord(accounts[0]!, 250), { ...plainRecord(accounts[0]!, 50), createdAt: EARLY }]);
    expect(await store.balanceOf(accounts[0]!)).toBe(balance - 300);
    expect(await store.sumLedger(accounts[0]!)).toBe(balance - 300);
  });

  it.runIf(backend.name === 'postgres')('fails whole on a value that is not a moment, and changes nothing', async () => {
    await seed();
    // sessions comes after ledger_entries: the ledger's change must be rolled back too.
    await store.db.updateTable('sessions').set({ last_seen_at: 'not a time' }).execute();
    const before = await allRows(store.db);
    const textBefore = await textMoments(store.db);

    await expect(store.migrate()).rejects.toThrow(/migration failed: invalid input syntax for type timestamp with time zone: "not a time"/);

    expect(await textMoments(store.db)).toEqual(textBefore);
    expect(await allRows(store.db)).toEqual(before);
    await store.db.updateTable('sessions').set({ last_seen_at: '2026-03-02T10:00:00.000Z' }).execute();
    expect(await store.migrate()).toEqual(['0022_typed_time']);
    expect(await textMoments(store.db)).toEqual([]);
  });
});
