// PostgreSQL: many writers at once (instances, the CLI), so balances are locked row by row
// in id order and change ids are made visible in commit order.
import { createRequire } from 'node:module';
import type pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { checkMicros } from '../../money.js';
import { ConnectionError, describeNetworkFailure, redactUrl } from '../connection-error.js';
import type { Dialect } from '../dialect.js';
import { chunked, type Db } from '../sql.js';
import { NotFoundInStoreError, type CappedCharge, type UsageRecord } from '../store.js';
import type { Database } from '../tables.js';
import { monthOf, MonthPartitions } from '../partitions.js';
import { shortfallsOf, usageRollups } from '../usage-rollup.js';
import { planUsageCharges } from '../usage-rows.js';
import { debitBalances, insertLedger, insertUsage, setShortfalls, upsertUsageRollups } from './postgres-usage-bulk.js';

const INT8_OID = 20;
const DATE_OID = 1082;
const TIMESTAMPTZ_OID = 1184;

// Loaded on first use: a server on SQLite never needs the driver (nor ioredis, Stripe's
// client or nodemailer, each loaded only where configured: together ~12 MB resident and a
// noticeable part of every CLI command's start).
const require = createRequire(import.meta.url);

export function openPostgres(connectionString: string): { db: Kysely<Database>; dialect: Dialect } {
  const { Pool, types } = require('pg') as typeof pg;
  const pool = new Pool({
    connectionString,
    max: 10,
    // BIGINT (micro-credits, counts) arrives as a string by default; amounts stay far
    // below 2^53, and money.ts checks that where values enter.
    // A timestamptz (every moment: migrations 0020 and 0022) reads back as the ISO 8601
    // text SQLite stores, and a date (the rollups' day) as its YYYY-MM-DD, not as a Date in
    // the process's time zone.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
        if (oid === INT8_OID) return (value: string) => Number(value);
        if (oid === DATE_OID) return (value: string) => value;
        if (oid === TIMESTAMPTZ_OID) {
          const parse = types.getTypeParser(oid, 'text') as (value: string) => Date;
          return (value: string) => parse(value).toISOString();
        }
        return types.getTypeParser(oid, format);
      }) as typeof types.getTypeParser,
    },
  });
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  // Every first query connects here: a server that cannot be used is said in one line.
  pool.connect = (() => connect().catch((err: unknown) => Promise.reject(connectionFailure(err, connectionString)))) as typeof pool.connect;
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: postgresDialect(new MonthPartitions(db)) };
}

/** PostgreSQL's refusals at connect, by SQLSTATE, in the operator's words. */
function connectionFailure(err: unknown, connectionString: string): unknown {
  const url = redactUrl(connectionString);
  const database = (() => {
    try {
      return decodeURIComponent(new URL(connectionString).pathname.slice(1)) || 'the database';
    } catch {
      return 'the database';
    }
  })();
  const network = describeNetworkFailure(err);
  if (network) return new ConnectionError(`cannot connect to PostgreSQL at ${url}: ${network}`, { cause: err });
  switch ((err as { code?: string } | undefined)?.code) {
    case '3D000':
      return new ConnectionError(`PostgreSQL at ${url} has no database "${database}": create it first (createdb ${database}, or CREATE DATABASE "${database}"), then start again`, { cause: err });
    case '28P01':
    case '28000':
      return new ConnectionError(`PostgreSQL at ${url} refused the login: ${(err as Error).message} (check the user and password in DATABASE_URL, and pg_hba.conf)`, { cause: err });
    case '57P03':
      return new ConnectionError(`PostgreSQL at ${url} is starting up or shutting down: try again in a moment`, { cause: err });
    default:
      return err instanceof Error && /SSL|certificate/i.test(err.message)
        ? new ConnectionError(`cannot connect to PostgreSQL at ${url}: ${err.message} (see sslmode in DATABASE_URL)`, { cause: err })
        : err;
  }
}

// IN lists stay far below the bound-parameter limit (65535).
const IDS_PER_LOCK = 1000;

function postgresDialect(partitions: MonthPartitions): Dialect {
  const dialect: Dialect = {
    name: 'postgres',
    utcDay: (column) => sql<string>`(${sql.ref(column)} at time zone 'UTC')::date`,
    transaction: (db, fn) => db.transaction().execute(fn),
    // SELECT ... FOR UPDATE in id order, so two transactions that lock overlapping sets take
    // the locks in the same order and cannot deadlock; a concurrent writer waits here and
    // then reads the committed balance.
    lockBalances: async (trx, accountIds) => {
      const balances = new Map<string, number>();
      for (const ids of chunked(accountIds, IDS_PER_LOCK)) {
        const rows = await trx.selectFrom('accounts').select(['id', 'balance_micros']).where('id', 'in', ids).orderBy('id').forUpdate().execute();
        for (const row of rows) balances.set(row.id, checkMicros(Number(row.balance_micros)));
      }
      const missing = accountIds.find((id) => !balances.has(id));
      if (missing !== undefined) throw new NotFoundInStoreError('account', missing);
      return balances;
    },
    // A bigserial id is taken at insert but becomes visible only at commit, so without care
    // a reader can see id 6 (committed first) before id 5, move past 5 and never deliver it.
    // The transaction-scoped lock makes change writers take ids and commit one at a time. It
    // is always the last lock a transaction takes, so it cannot deadlock with row locks.
    serializeChanges: async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('lmgate.change_events'))`.execute(trx);
    },
    recordUsage: async (db, records, at, inTransaction) => {
      await partitions.ensure('usage_records', new Set(records.map((r) => monthOf(r.createdAt))));
      if (inTransaction) return recordUsageIn(dialect, db, records, at);
      return db.transaction().execute((trx) => recordUsageIn(dialect, trx, records, at));
    },
    ensurePartitions: (table, months) => partitions.ensure(table, months),
    forgetPartition: (table, month) => partitions.forget(table, month),
    // The pool is the connection: nothing to start, and Kysely's destroy closes it.
    prepareUsageWrites: () => undefined,
    usageThreadCpuSeconds: () => undefined,
    close: async () => undefined,
  };
  return dialect;
}

async function recordUsageIn(dialect: Dialect, trx: Db, records: readonly UsageRecord[], at: string): Promise<CappedCharge[]> {
  const accountIds = [...new Set(records.map((r) => r.accountId))].sort();
  // Balances are locked before anything is written, so a concurrent writer (another
  // instance, the CLI) either sees this batch whole or waits for it.
  const balances = await dialect.lockBalances(trx, accountIds);

  // ON CONFLICT DO NOTHING ... RETURNING answers with the rows actually inserted: a record
  // already stored (a retried batch) is neither written nor charged. A concurrent insert of
  // the same record waits for the other transaction and is then skipped, so checking for
  // existing ids first would race.
  const inserted = await insertUsage(trx, records);
  const stored = records.filter((r) => inserted.has(r.id));
  const { entries, chargedByAccount, capped } = planUsageCharges(stored, balances, at);
  await insertLedger(trx, entries);
  await debitBalances(trx, chargedByAccount);
  await setShortfalls(trx, capped, stored);
  await upsertUsageRollups(trx, usageRollups(stored, shortfallsOf(capped)));
  return capped;
}
