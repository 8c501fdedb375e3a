// API requests refused before they reached a model (401 for a revoked key aside: no account
// is known then), kept for a configurable number of days so the customer's request log
// shows them beside the usage records of the requests that did.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .createTable('refused_requests')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('request_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('model', 'varchar(200)')
    .addColumn('path', 'varchar(200)', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('reason', 'varchar(60)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  // An account's log newest first (the dashboard), and the retention's sweep by age.
  await db.schema.createIndex('refused_requests_account_id_created_at').on('refused_requests').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('refused_requests_created_at').on('refused_requests').column('created_at').execute();
}
