import type { Kysely } from 'kysely';
import { isPostgres, type MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('email', 'varchar(320)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(200)')
    .addColumn('status', 'varchar(20)', (c) => c.notNull().defaultTo('active'))
    .addColumn('tier', 'varchar(100)', (c) => c.notNull())
    .addColumn('subscription_status', 'varchar(20)', (c) => c.notNull().defaultTo('inactive'))
    .addColumn('subscription_period_end', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('prefix', 'varchar(20)', (c) => c.notNull())
    .addColumn('last_four', 'varchar(4)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('last_used_at', 'varchar(40)')
    .addColumn('revoked_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('api_keys_account_id').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('change_events')
    .addColumn('id', isPostgres(db) ? 'bigserial' : 'integer', (c) =>
      isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('kind', 'varchar(20)', (c) => c.notNull())
    .addColumn('subject_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
}
