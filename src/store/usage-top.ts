// The accounts or keys that cost the most in a period, exactly, without summing every one.
// A period of many months across 10,000 accounts is hundreds of thousands of rollup rows;
// the monthly rollups (usage_accounts_monthly, usage_keys_monthly) are ranked by cost
// within each month, so the top of a period is found from the top of each of its months:
//
// 1. Candidates: the `depth` costliest of each month (of a month the period cuts to a few
//    days, of those days). One that is in no month's list cost at most the last listed cost
//    of each month (0 where a list holds the whole month), so at most their sum, the bound.
// 2. Each candidate's exact totals: whole months from the monthly rows, the days of a month
//    the period cuts from usage_daily (or the month less its days outside the period).
// 3. When the `top`-th candidate cost more than the bound, no other can be above it, and
//    the answer is exact. Otherwise the lists go deeper; past MAX_CANDIDATES the period's
//    usage_daily rows are summed whole, as they always can be.
import { sql } from 'kysely';
import { checkMicros } from '../money.js';
import type { Db } from './sql.js';
import { monthOf, nextMonth, sumsOf, USAGE_DAILY_SUMS } from './usage-rollup.js';
import type { UsageSumColumns } from './usage-rollup-tables.js';
export interface RankedUsage {
  /** The account's id, or the key's. */
  id: string;
  accountId: string;
  sums: UsageSumColumns;
}

const SCOPES = {
  account: { monthly: 'usage_accounts_monthly', id: 'account_id' },
  key: { monthly: 'usage_keys_monthly', id: 'key_id' },
} as const;
export type RankedBy = keyof typeof SCOPES;

const FIRST_DEPTH = 256;
/** Candidates asked for by id at most: far below either database's bound on parameters. */
const MAX_CANDIDATES = 20_000;

export interface TopOptions {
  /** One account's own (it, or its keys): its rows are few, and summed whole. */
  accountId?: string;
  /** The first lists' depth (tests make it small to reach the deeper rounds). */
  firstDepth?: number;
}

/** The `top` costliest in [fromDay, untilDay) (UTC days), costliest first, then by id. */
export async function topByCost(db: Db, by: RankedBy, fromDay: string, untilDay: string, top: number, options: TopOptions = {}): Promise<RankedUsage[]> {
  if (top === 0 || fromDay >= untilDay) return [];
  const months = monthsOf(fromDay, untilDay);
  if (options.accountId !== undefined) return rank(await totalsOf(db, by, months, { accountId: options.accountId })).slice(0, top);
  for (let depth = Math.max(options.firstDepth ?? FIRST_DEPTH, 2 * top); depth * months.length <= MAX_CANDIDATES; depth *= 4) {
    const lists = await monthTops(db, by, months, depth);
    const complete = lists.every((list) => list.length < depth);
    const bound = lists.reduce((sum, list) => sum + (list.length < depth ? 0 : list[list.length - 1]!.cost), 0);
    const ids = [...new Set(lists.flat().map((row) => row.id))];
    const ranked = rank(await totalsOf(db, by, months, { ids }));
    if (complete || (ranked.length >= top && ranked[top - 1]!.sums.cost_micros > bound)) return ranked.slice(0, top);
  }
  // Every row of the period's days, as they are.
  return rank(await totalsOf(db, by, months.map((part) => ({ ...part, how: 'days' as const })), 'all')).slice(0, top);
}

/**
 * How a month of the period is summed: `whole`, its monthly row; `less`, its monthly row
 * less the days `outside` the period (when those are fewer: this month up to today);
 * `days`, its days in the period from usage_daily.
 */
interface MonthPart {
  month: string;
  how: 'whole' | 'less' | 'days';
  /** The month's days in the period. */
  fromDay: string;
  untilDay: string;
  outside: DayRange[];
}

interface DayRange {
  fromDay: string;
  untilDay: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * In a period of one or two months, a month it cuts to at most this many days ranks its ids
 * from those days' rows: a bound far tighter than its month's, which would be half the
 * period's. Among more months one such month loosens the bound little, and its days' rows
 * cost more to rank than its month's.
 */
const FEW_DAYS = 7;
const FEW_MONTHS = 2;

function monthsOf(fromDay: string, untilDay: string): MonthPart[] {
  const parts: MonthPart[] = [];
  for (let month = monthOf(fromDay); month < untilDay; month = nextMonth(month)) {
    const end = nextMonth(month);
    const from = fromDay > month ? fromDay : month;
    const until = untilDay < end ? untilDay : end;
    const outside = [
      { fromDay: month, untilDay: from },
      { fromDay: until, untilDay: end },
    ].filter((range) => range.fromDay < range.untilDay);
    const how = outside.length === 0 ? 'whole' : daysIn(outside) < daysIn([{ fromDay: from, untilDay: until }]) ? 'less' : 'days';
    parts.push({ month, how, fromDay: from, untilDay: until, outside });
  }
  return parts;
}

function daysIn(ranges: readonly DayRange[]): number {
  return ranges.reduce((days, range) => days + (Date.parse(range.untilDay) - Date.parse(range.fromDay)) / DAY_MS, 0);
}

function inDays(ranges: readonly DayRange[]) {
  return sql.join(ranges.map((range) => sql`(day >= ${range.fromDay} and day < ${range.untilDay})`), sql` or `);
}

/**
 * Each part's `depth` costliest ids with their cost (in the month, or in a short cut's own
 * days), costliest first: one statement.
 */
async function monthTops(db: Db, by: RankedBy, months: readonly MonthPart[], depth: number): Promise<{ id: string; cost: number }[][]> {
  const { monthly, id } = SCOPES[by];
  const lists = months.map((part, i) => {
    const list =
      part.how === 'days' && daysIn([part]) <= FEW_DAYS && months.length <= FEW_MONTHS
        ? sql`select ${i} as part, ${sql.ref(id)} as id, sum(cost_micros) as cost from usage_daily
            where ${inDays([part])} group by ${sql.ref(id)} order by sum(cost_micros) desc limit ${depth}`
        : sql`select ${i} as part, ${sql.ref(id)} as id, cost_micros as cost from ${sql.table(monthly)}
            where month = ${part.month} order by cost_micros desc limit ${depth}`;
    return sql`select * from (${list}) as ${sql.id(`m${i}`)}`;
  });
  const { rows } = await sql<{ part: number | string; id: string; cost: number | string }>`${sql.join(lists, sql` union all `)}`.execute(db);
  const byMonth = months.map((): { id: string; cost: number }[] => []);
  for (const row of rows) byMonth[Number(row.part)]!.push({ id: row.id, cost: Number(row.cost) });
  for (const list of byMonth) list.sort((a, b) => b.cost - a.cost);
  return byMonth;
}

/**
 * Exact totals in the period (its `months`, each part summed as its `how` says; both
 * queries at once) of some ids, of one account's own, or of all with usage in it.
 */
async function totalsOf(db: Db, by: RankedBy, months: readonly MonthPart[], of: { ids: readonly string[] } | { accountId: string } | 'all'): Promise<RankedUsage[]> {
  const { monthly, id } = SCOPES[by];
  if (of !== 'all' && 'ids' in of && of.ids.length === 0) return [];
  const wholeMonths = months.filter((part) => part.how !== 'days').map((part) => part.month);
  const plus: DayRange[] = months.filter((part) => part.how === 'days');
  const minus = months.flatMap((part) => (part.how === 'less' ? part.outside : []));
  const summed = sql.join(USAGE_DAILY_SUMS.map((column) => sql`sum(${sql.ref(column)}) as ${sql.ref(column)}`));
  const idIn = of === 'all' ? sql`1 = 1` : 'ids' in of ? sql`${sql.ref(id)} in (${sql.join(of.ids)})` : sql`account_id = ${of.accountId}`;
  const queries = [];
  if (wholeMonths.length > 0) {
    queries.push(sql`select ${sql.ref(id)} as id, max(account_id) as account_id, ${summed} from ${sql.table(monthly)}
      where month in (${sql.join(wholeMonths)}) and ${idIn} group by ${sql.ref(id)}`);
  }
  if (plus.length + minus.length > 0) {
    // One pass over the days: those taken away from a month's row count negative.
    const signed =
      minus.length === 0
        ? summed
        : sql.join(USAGE_DAILY_SUMS.map((column) => sql`sum(case when ${inDays(minus)} then -${sql.ref(column)} else ${sql.ref(column)} end) as ${sql.ref(column)}`));
    queries.push(sql`select ${sql.ref(id)} as id, max(account_id) as account_id, ${signed} from usage_daily
      where (${inDays([...plus, ...minus])}) and ${idIn} group by ${sql.ref(id)}`);
  }
  const totals = new Map<string, RankedUsage>();
  const results = await Promise.all(queries.map((query) => sql<Record<string, string | number | null>>`${query}`.execute(db)));
  for (const { rows } of results) {
    for (const row of rows) {
      const key = String(row.id);
      const total = totals.get(key) ?? { id: key, accountId: String(row.account_id), sums: sumsOf({}) };
      for (const column of USAGE_DAILY_SUMS) total.sums[column] += Number(row[column] ?? 0);
      totals.set(key, total);
    }
  }
  for (const total of totals.values()) checkMicros(total.sums.cost_micros);
  // A candidate listed for a month the period only cuts may have no usage in the period.
  return [...totals.values()].filter((total) => total.sums.requests > 0);
}

function rank(rows: RankedUsage[]): RankedUsage[] {
  return rows.sort((a, b) => b.sums.cost_micros - a.sums.cost_micros || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
