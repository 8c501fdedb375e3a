// Every difference between SQLite and PostgreSQL that the domain modules meet, in one
// object: how a transaction begins, how balances are locked, how change ids are kept in
// commit order, and how the busiest write (usage batches) is done.
import type { RawBuilder } from 'kysely';
import type { CappedCharge, UsageRecord } from './store.js';
import type { PartitionedTable } from './partitions.js';
import type { Db } from './sql.js';

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** The UTC day (`YYYY-MM-DD`) of a stored moment: ISO 8601 text on SQLite, a timestamptz on PostgreSQL (0022). */
  utcDay(column: string): RawBuilder<string>;
  /** Runs `fn` in a transaction on `db`: committed when it resolves, rolled back when it throws. */
  transaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T>;
  /**
   * Locks the accounts' rows for the rest of the transaction and reads their balances;
   * throws NotFoundInStoreError if one does not exist. `accountIds` must be sorted.
   */
  lockBalances(trx: Db, accountIds: readonly string[]): Promise<Map<string, number>>;
  /** Before a change event is inserted: makes change ids become visible in id order. */
  serializeChanges(trx: Db): Promise<void>;
  /**
   * Stores usage records (already checked and unique) with their ledger charges; see
   * Store.recordUsage. `inTransaction`: `db` is a transaction this call must join.
   */
  recordUsage(db: Db, records: readonly UsageRecord[], at: string, inTransaction: boolean): Promise<CappedCharge[]>;
  /**
   * PostgreSQL: makes `table`'s monthly partitions for these months (`YYYY-MM`) unless made
   * already (partitions.ts), outside any transaction. SQLite has one table: nothing.
   */
  ensurePartitions(table: PartitionedTable, months: Iterable<string>): Promise<void>;
  /** A partition was dropped: a later write of its month makes it again. */
  forgetPartition(table: PartitionedTable, month: string): void;
  /** Starts what writes usage beside the connection (SQLite's usage write thread), if anything. */
  prepareUsageWrites(): void;
  /** CPU seconds the usage write thread has used, where there is one and the OS tells. */
  usageThreadCpuSeconds(): number | undefined;
  /** Stops what the dialect runs beside the connection (SQLite's usage write thread). */
  close(): Promise<void>;
}
