// Usage data at scale, as the Store port holds it: the raw records streamed out in pages
// (exports), checked against the daily rollups and the ledger (`lmgate usage verify`), and
// dropped past the retention (whole monthly partitions on PostgreSQL, batches on SQLite).
import type { TimeRange, UsageRecord } from './usage-records.js';

/** Which raw usage records an export reads, oldest first unless `newestFirst`. */
export interface UsageExportQuery extends TimeRange {
  /** One account's (or organisation's) records; every account's when absent. */
  accountId?: string;
  /** Only the records of keys this member of an organisation made. */
  memberId?: string;
  /** Rows per read: memory holds one page at a time. */
  pageSize?: number;
  /** Newest first (the dashboard's CSV), ordered by created_at then id, both descending. */
  newestFirst?: boolean;
}

/** One place where the rollups, the raw records or the ledger disagree (see verifyUsage). */
export interface UsageDifference {
  /**
   * What was compared: the rollup of a (day, account, key, model, status) group against
   * the raw records, or a rollup across accounts against usage_daily (`group` names its
   * table; an account's month, a key's month, or a day's model and status); or an
   * account's charges on a day.
   */
  kind: 'rollup' | 'ledger';
  day: string;
  accountId: string;
  /** The group, for a rollup difference: "key_id model status", or the rollup's table and its key. */
  group?: string;
  field: string;
  /** The value the raw records (or the ledger) give, and the one the rollup (or the records) give. */
  expected: number;
  actual: number;
}

/** What a retention sweep removed. */
export interface UsagePruned {
  /** Monthly partitions dropped whole (PostgreSQL). */
  partitionsDropped: string[];
  /** Rows deleted one batch at a time (SQLite, or a month only partly past the retention). */
  rowsDeleted: number;
}

export interface UsageDataStore {
  /** Raw usage records in [fromIso, untilIso), oldest first (by created_at, then id), read a page at a time. */
  exportUsage(query: UsageExportQuery): AsyncIterable<UsageRecord>;
  /**
   * Compares, for each UTC day in the range, the daily rollups with the raw usage records,
   * and each account's usage charges in the ledger with its records' cost less shortfall.
   * Days whose raw records are gone (retention) cannot be checked and are skipped.
   */
  verifyUsage(range: TimeRange): Promise<UsageDifference[]>;
  /** Deletes raw usage records created before `beforeIso`; rollups and the ledger stay (refusals: pruneRefusals). */
  pruneUsage(beforeIso: string): Promise<UsagePruned>;
  /** PostgreSQL: creates the monthly partitions that rows in [fromIso, untilIso) need. SQLite: nothing. */
  ensureUsagePartitions(fromIso: string, untilIso: string): Promise<void>;
}
