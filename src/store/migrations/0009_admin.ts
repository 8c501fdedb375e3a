// The operator's side: an audit log of admin actions, admin API keys with scopes, an
// account's role (operators sign in to the console), disabled redemption codes, and an
// index for usage read across accounts.
import type { Kysely } from 'kysely';
import { isPostgres, type MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('role', 'varchar(20)', (c) => c.notNull().defaultTo('customer'))
    .execute();

  // Append-only, written in the same transaction as the change it describes. No foreign
  // keys: the log outlives what it names, and names things of several kinds.
  await db.schema
    .createTable('audit_log')
    .addColumn('id', isPostgres(db) ? 'bigserial' : 'integer', (c) =>
      isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('actor_kind', 'varchar(20)', (c) => c.notNull()) // cli | admin_key | operator
    .addColumn('actor_id', 'varchar(200)', (c) => c.notNull())
    .addColumn('action', 'varchar(60)', (c) => c.notNull())
    .addColumn('target_kind', 'varchar(20)', (c) => c.notNull())
    .addColumn('target_id', 'varchar(200)', (c) => c.notNull())
    .addColumn('before_json', 'text')
    .addColumn('after_json', 'text')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_target_id').on('audit_log').columns(['target_id', 'id']).execute();

  await db.schema
    .createTable('admin_keys')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('prefix', 'varchar(30)', (c) => c.notNull())
    .addColumn('last_four', 'varchar(4)', (c) => c.notNull())
    .addColumn('scopes', 'varchar(200)', (c) => c.notNull()) // comma-separated AdminScope
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('last_used_at', 'varchar(40)')
    .addColumn('revoked_at', 'varchar(40)')
    .execute();

  await db.schema.alterTable('redemption_codes').addColumn('disabled_at', 'varchar(40)').execute();

  // Usage across accounts by period (the admin API's reports, the console's overview).
  await db.schema.createIndex('usage_records_created_at').on('usage_records').column('created_at').execute();
}
