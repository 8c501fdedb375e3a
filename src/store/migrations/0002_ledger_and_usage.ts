// Credits: a cached balance on the account, the append-only ledger it is the sum of, and
// the usage records that usage entries point to (DESIGN "Money is a ledger").
//
// Portability notes: amounts are BIGINT (INTEGER affinity on SQLite, int8 on PostgreSQL,
// parsed to a number by dialects/postgres.ts). `usage_records.streamed` is an integer 0/1,
// not a boolean: better-sqlite3 cannot bind JavaScript booleans and SQLite has no boolean
// type, while an integer reads back as a number on both.
import { sql, type Kysely } from 'kysely';
import { isPostgres, type MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  // The CHECK is the last line of defence behind the store's own check: no code path,
  // however buggy, can commit a negative balance.
  await db.schema
    .alterTable('accounts')
    .addColumn('balance_micros', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`balance_micros >= 0`))
    .execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', isPostgres(db) ? 'bigserial' : 'integer', (c) =>
      isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'varchar(30)', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'varchar(500)')
    .addColumn('reference', 'varchar(200)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  // An account's entries newest first (listLedger) and their sum (sumLedger).
  await db.schema.createIndex('ledger_entries_account_id_id').on('ledger_entries').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('usage_records')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('request_id', 'varchar(200)', (c) => c.notNull())
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    // No foreign key: a usage record is history, written in batches off the request path.
    .addColumn('key_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
    .addColumn('completion_tokens', 'integer', (c) => c.notNull())
    .addColumn('cost_micros', 'bigint', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('streamed', 'integer', (c) => c.notNull().check(sql`streamed in (0, 1)`))
    .addColumn('finish_reason', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  // An account's usage newest first, from a given time (listUsage, the dashboard).
  await db.schema
    .createIndex('usage_records_account_id_created_at')
    .on('usage_records')
    .columns(['account_id', 'created_at'])
    .execute();
}
