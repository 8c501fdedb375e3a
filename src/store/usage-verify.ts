// The daily rollups checked against the raw records and the ledger (`lmgate usage verify`).
// One UTC day at a time, each side grouped in SQL and read in one snapshot (a batch
// committed between two reads would look like a difference): memory holds one day's
// groups whatever the range, and a day without any row is never visited.
//
// The rollups outlive the raw rows. A day before the oldest raw row left (of usage, or of
// refusals, each on its own) is past the retention and is skipped, not reported: nothing
// is left to check it against. The oldest day itself may have been cut within the day
// (refusals are pruned at now less their retention), so there only a rollup short of its
// raw rows is reported, never raw rows short of their rollup. The ledger check follows the
// records that are left and holds on every day. Then the rollups across accounts against
// usage_daily, a month at a time: those hold on every day, and every month the range holds.
import { sql } from 'kysely';
import type { Db } from './sql.js';
import type { TimeRange } from './store.js';
import type { UsageDifference } from './usage-data-store.js';
import { rollupDays } from './usage.js';
import { monthOf, nextMonth, sumsOf, USAGE_DAILY_SUMS } from './usage-rollup.js';
import type { UsageSumColumns } from './usage-rollup-tables.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** usage_daily's sums, as a rollup row or a day's raw records give them (bigint sums as text). */
type Summed = { [field in keyof UsageSumColumns]: number | string | null };

interface Pass {
  raw: 'usage_records' | 'refused_requests';
  rollup: 'usage_daily' | 'refusal_daily';
  check(db: Db, day: string): Promise<UsageDifference[]>;
}

const PASSES: readonly Pass[] = [
  { raw: 'usage_records', rollup: 'usage_daily', check: checkUsageDay },
  { raw: 'refused_requests', rollup: 'refusal_daily', check: checkRefusalDay },
];

/** Every difference in the whole UTC days the range touches (see rollupDays), by day, then account. */
export async function verifyUsage(db: Db, range: TimeRange): Promise<UsageDifference[]> {
  const { fromDay, untilDay } = rollupDays(range);
  const differences: UsageDifference[] = [];
  for (const pass of PASSES) {
    const oldest = await firstRawDay(db, pass.raw, null);
    if (oldest === null) continue;
    for (let day = await nextDayWithRows(db, pass, fromDay < oldest ? oldest : fromDay); day !== null && day < untilDay; day = await nextDayWithRows(db, pass, dayAfter(day))) {
      const checked = day;
      const found = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute((trx) => pass.check(trx, checked));
      differences.push(...(day === oldest ? found.filter((difference) => difference.kind === 'ledger' || difference.expected > difference.actual) : found));
    }
  }
  for (let month = monthOf(fromDay); month < untilDay; month = nextMonth(month)) {
    const days = { fromDay: fromDay > month ? fromDay : month, untilDay: untilDay < nextMonth(month) ? untilDay : nextMonth(month) };
    differences.push(...(await db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute((trx) => checkCoarseMonth(trx, month, days))));
  }
  return differences.sort((a, b) => compare(a.day, b.day) || compare(a.accountId, b.accountId) || compare(a.kind, b.kind) || compare(a.group ?? '', b.group ?? ''));
}

/** Each (account, key, model, status) group of the day's records against its rollup row; then each account's charges against the ledger. */
async function checkUsageDay(db: Db, day: string): Promise<UsageDifference[]> {
  const { fromIso, untilIso } = dayRange(day);
  const [raw, rolled, ledger] = await Promise.all([
    db
      .selectFrom('usage_records')
      .where('created_at', '>=', fromIso)
      .where('created_at', '<', untilIso)
      .select((eb) => [
        'account_id',
        'key_id',
        'model',
        'status',
        eb.fn.countAll<number | string>().as('requests'),
        eb.fn.sum<number | string>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number | string>('completion_tokens').as('completion_tokens'),
        eb.fn.sum<number | string>('cached_tokens').as('cached_tokens'),
        eb.fn.sum<number | string>('cache_write_tokens').as('cache_write_tokens'),
        eb.fn.sum<number | string>('cache_write_1h_tokens').as('cache_write_1h_tokens'),
        eb.fn.sum<number | string>('reasoning_tokens').as('reasoning_tokens'),
        sql<number | string>`sum(case when basis = 'counted' then 1 else 0 end)`.as('counted_requests'),
        eb.fn.sum<number | string>('cost_micros').as('cost_micros'),
        eb.fn.sum<number | string>('shortfall_micros').as('shortfall_micros'),
      ])
      .groupBy(['account_id', 'key_id', 'model', 'status'])
      .execute(),
    db
      .selectFrom('usage_daily')
      .where('day', '=', day)
      .select(['account_id', 'key_id', 'model', 'status', ...USAGE_DAILY_SUMS])
      .execute(),
    // ledger_entries.created_at is when the batch was written, not the request: the ledger
    // follows its records' day through the reference.
    db
      .selectFrom('usage_records')
      .innerJoin('ledger_entries', (join) => join.onRef('ledger_entries.reference', '=', 'usage_records.id').on('ledger_entries.kind', '=', 'usage'))
      .where('usage_records.created_at', '>=', fromIso)
      .where('usage_records.created_at', '<', untilIso)
      .select((eb) => ['ledger_entries.account_id', eb.fn.sum<number | string>('ledger_entries.amount_micros').as('amount_micros')])
      .groupBy('ledger_entries.account_id')
      .execute(),
  ]);
  const differences: UsageDifference[] = [];
  const rollups = new Map(rolled.map((row) => [usageGroup(row), row]));
  const chargedByAccount = new Map<string, number>();
  for (const row of raw) {
    const group = usageGroup(row);
    const expected = sumsOf(row);
    chargedByAccount.set(row.account_id, (chargedByAccount.get(row.account_id) ?? 0) + expected.cost_micros - expected.shortfall_micros);
    const rollup = rollups.get(group);
    rollups.delete(group);
    if (rollup === undefined) {
      differences.push({ kind: 'rollup', day, accountId: row.account_id, group: group.slice(row.account_id.length + 1), field: 'requests', expected: expected.requests, actual: 0 });
      continue;
    }
    const actual = sumsOf(rollup);
    for (const field of USAGE_DAILY_SUMS) {
      if (expected[field] !== actual[field]) differences.push({ kind: 'rollup', day, accountId: row.account_id, group: group.slice(row.account_id.length + 1), field, expected: expected[field], actual: actual[field] });
    }
  }
  for (const [group, rollup] of rollups) {
    differences.push({ kind: 'rollup', day, accountId: rollup.account_id, group: group.slice(rollup.account_id.length + 1), field: 'requests', expected: 0, actual: Number(rollup.requests) });
  }
  // Charges are negative amounts; a record with no cost has no entry, and one the balance
  // could not cover at all has an entry of 0.
  const ledgerByAccount = new Map(ledger.map((row) => [row.account_id, -Number(row.amount_micros ?? 0)]));
  for (const accountId of new Set([...chargedByAccount.keys(), ...ledgerByAccount.keys()])) {
    const expected = ledgerByAccount.get(accountId) ?? 0;
    const actual = chargedByAccount.get(accountId) ?? 0;
    if (expected !== actual) differences.push({ kind: 'ledger', day, accountId, field: 'charged_micros', expected, actual });
  }
  return differences;
}

/**
 * The rollups across accounts in one month against usage_daily's rows (which the check
 * above holds to the raw records); they outlive the raw rows, so every month is checked:
 * the day's model rows on the range's `days` of it, the month's account and key rows when
 * the range holds the whole month. A difference is dated by its day, or by the month's
 * first day for a month's rows.
 */
async function checkCoarseMonth(db: Db, month: string, days: { fromDay: string; untilDay: string }): Promise<UsageDifference[]> {
  const whole = days.fromDay === month && days.untilDay === nextMonth(month);
  const inDays = (from: string, until: string) =>
    db
      .selectFrom('usage_daily')
      .where('day', '>=', from)
      .where('day', '<', until)
      .select((eb) => USAGE_DAILY_SUMS.map((column) => eb.fn.sum<number | string>(column).as(column)));
  const none = Promise.resolve([]);
  const [accounts, keys, models, rolledAccounts, rolledKeys, rolledModels] = await Promise.all([
    whole ? inDays(month, nextMonth(month)).select('account_id').groupBy('account_id').execute() : none,
    whole ? inDays(month, nextMonth(month)).select(['key_id', (eb) => eb.fn.max('account_id').as('account_id')]).groupBy('key_id').execute() : none,
    inDays(days.fromDay, days.untilDay).select(['day', 'model', 'status']).groupBy(['day', 'model', 'status']).execute(),
    whole ? db.selectFrom('usage_accounts_monthly').where('month', '=', month).selectAll().execute() : none,
    whole ? db.selectFrom('usage_keys_monthly').where('month', '=', month).selectAll().execute() : none,
    db.selectFrom('usage_models_daily').where('day', '>=', days.fromDay).where('day', '<', days.untilDay).selectAll().execute(),
  ]);
  type Grouped = { day: string; accountId: string; group: string; sums: UsageSumColumns };
  const compareGroups = (expected: Grouped[], actual: Grouped[]): UsageDifference[] => {
    const differences: UsageDifference[] = [];
    const byKey = (rows: Grouped[]) => new Map(rows.map((row) => [`${row.day} ${row.accountId} ${row.group}`, row]));
    const want = byKey(expected);
    const have = byKey(actual);
    for (const key of new Set([...want.keys(), ...have.keys()])) {
      const { day, accountId, group } = (want.get(key) ?? have.get(key))!;
      for (const field of USAGE_DAILY_SUMS) {
        const wanted = want.get(key)?.sums[field] ?? 0;
        const had = have.get(key)?.sums[field] ?? 0;
        if (wanted !== had) differences.push({ kind: 'rollup', day, accountId, group, field, expected: wanted, actual: had });
      }
    }
    return differences;
  };
  const account = (row: Summed & { account_id: string }): Grouped => ({ day: month, accountId: row.account_id, group: 'usage_accounts_monthly', sums: sumsOf(row) });
  const key = (row: Summed & { key_id: string; account_id: string }): Grouped => ({ day: month, accountId: row.account_id, group: `usage_keys_monthly ${row.key_id}`, sums: sumsOf(row) });
  const model = (row: Summed & { day: string; model: string; status: number | string }): Grouped => ({
    day: String(row.day), accountId: '', group: `usage_models_daily ${row.model} ${Number(row.status)}`, sums: sumsOf(row),
  });
  return [
    ...compareGroups(accounts.map(account), rolledAccounts.map(account)),
    ...compareGroups(keys.map(key), rolledKeys.map(key)),
    ...compareGroups(models.map(model), rolledModels.map(model)),
  ];
}

/** Each (account, key, status) count of the day's refused requests against its refusal_daily row. */
async function checkRefusalDay(db: Db, day: string): Promise<UsageDifference[]> {
  const { fromIso, untilIso } = dayRange(day);
  const [raw, rolled] = await Promise.all([
    db
      .selectFrom('refused_requests')
      .where('created_at', '>=', fromIso)
      .where('created_at', '<', untilIso)
      .select((eb) => ['account_id', 'key_id', 'status', eb.fn.countAll<number | string>().as('requests')])
      .groupBy(['account_id', 'key_id', 'status'])
      .execute(),
    db.selectFrom('refusal_daily').where('day', '=', day).select(['account_id', 'key_id', 'status', 'requests']).execute(),
  ]);
  const group = (row: { key_id: string; status: number | string }): string => `${row.key_id} ${Number(row.status)} refused`;
  const counts = new Map<string, { accountId: string; group: string; expected: number; actual: number }>();
  for (const [rows, side] of [
    [raw, 'expected'],
    [rolled, 'actual'],
  ] as const) {
    for (const row of rows) {
      const key = `${row.account_id} ${group(row)}`;
      const count = counts.get(key) ?? { accountId: row.account_id, group: group(row), expected: 0, actual: 0 };
      count[side] += Number(row.requests);
      counts.set(key, count);
    }
  }
  return [...counts.values()].filter((count) => count.expected !== count.actual).map((count) => ({ kind: 'rollup', day, field: 'requests', ...count }));
}

/** "account_id key_id model status": a rollup row's key within its day. */
function usageGroup(row: { account_id: string; key_id: string; model: string; status: number | string }): string {
  return `${row.account_id} ${row.key_id} ${row.model} ${Number(row.status)}`;
}

/** The UTC day of the oldest raw row (at or after `day`'s start), or null. */
async function firstRawDay(db: Db, table: Pass['raw'], day: string | null): Promise<string | null> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.min('created_at').as('at'))
    .$call((q) => (day === null ? q : q.where('created_at', '>=', dayRange(day).fromIso)))
    .executeTakeFirst();
  // ISO 8601 text on both databases (PostgreSQL's timestamptz is parsed back to it).
  return row?.at == null ? null : new Date(row.at).toISOString().slice(0, 10);
}

/** The first day at or after `day` with a raw row or a rollup row, or null: empty days cost nothing. */
async function nextDayWithRows(db: Db, pass: Pass, day: string): Promise<string | null> {
  const [raw, rollup] = await Promise.all([
    firstRawDay(db, pass.raw, day),
    db
      .selectFrom(pass.rollup)
      .select((eb) => eb.fn.min('day').as('day'))
      .where('day', '>=', day)
      .executeTakeFirst()
      .then((row) => (row?.day == null ? null : String(row.day))),
  ]);
  if (raw === null || rollup === null) return raw ?? rollup;
  return raw < rollup ? raw : rollup;
}

function dayRange(day: string): TimeRange {
  const startMs = Date.parse(`${day}T00:00:00.000Z`);
  return { fromIso: new Date(startMs).toISOString(), untilIso: new Date(startMs + DAY_MS).toISOString() };
}

function dayAfter(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS).toISOString().slice(0, 10);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
