// SQLite: one file, one writer at a time. Transactions begin IMMEDIATE, taking the write
// lock up front: Kysely's deferred BEGIN would let a transaction that reads first and
// writes later fail with SQLITE_BUSY_SNAPSHOT (busy_timeout does not help) when another
// process (the CLI beside a server) commits in between.
import { Kysely, SqliteDialect, sql } from 'kysely';
import { checkMicros } from '../../money.js';
import type { Dialect } from '../dialect.js';
import { chunked, type Db } from '../sql.js';
import { NotFoundInStoreError } from '../store.js';
import type { Database } from '../tables.js';
import { openSqliteHandle } from './sqlite-handle.js';
import { SqliteUsageBulk } from './sqlite-usage-bulk.js';
import { SqliteUsageWorker } from './sqlite-usage-worker.js';

/** Kysely over the file, and the dialect with the raw handle for prepared-statement writes. */
export function openSqlite(path: string): { db: Kysely<Database>; dialect: Dialect } {
  const sqlite = openSqliteHandle(path);
  // A database in memory is this connection's alone: its usage is written on it.
  const worker = path === ':memory:' ? undefined : new SqliteUsageWorker(path);
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }), dialect: sqliteDialect(new SqliteUsageBulk(sqlite), worker) };
}

const IDS_PER_QUERY = 1000;

function sqliteDialect(bulk: SqliteUsageBulk, worker: SqliteUsageWorker | undefined): Dialect {
  return {
    name: 'sqlite',
    utcDay: (column) => sql<string>`substr(${sql.ref(column)}, 1, 10)`,
    // Kysely's SQLite driver has one connection: while a transaction holds it, other
    // queries of this process wait for it.
    transaction: (db, fn) =>
      db.connection().execute(async (connection) => {
        await sql`begin immediate`.execute(connection);
        try {
          const result = await fn(connection);
          await sql`commit`.execute(connection);
          return result;
        } catch (err) {
          await sql`rollback`.execute(connection);
          throw err;
        }
      }),
    // The transaction holds the write lock already: the balances read are current.
    lockBalances: async (trx, accountIds) => {
      const balances = new Map<string, number>();
      for (const ids of chunked(accountIds, IDS_PER_QUERY)) {
        const rows = await trx.selectFrom('accounts').select(['id', 'balance_micros']).where('id', 'in', ids).execute();
        for (const row of rows) balances.set(row.id, checkMicros(Number(row.balance_micros)));
      }
      const missing = accountIds.find((id) => !balances.has(id));
      if (missing !== undefined) throw new NotFoundInStoreError('account', missing);
      return balances;
    },
    // One writer at a time: ids are committed in order already.
    serializeChanges: async () => undefined,
    // One usage record per request makes this the store's busiest write: prepared
    // statements (about 8× cheaper than building multi-row inserts), on the usage write
    // thread, so the event loop only hands the batch over. Inside a caller's transaction
    // it must join that transaction, on the Kysely handle.
    recordUsage: async (db: Db, records, at, inTransaction) => {
      if (inTransaction) return bulk.recordUsage(records, at);
      if (worker) return worker.recordUsage(records, at);
      return db.connection().execute(async () => bulk.recordUsage(records, at));
    },
    // One table, no partitions.
    ensurePartitions: async () => undefined,
    forgetPartition: () => undefined,
    prepareUsageWrites: () => worker?.start(),
    usageThreadCpuSeconds: () => worker?.cpuSeconds,
    close: async () => worker?.close(),
  };
}
