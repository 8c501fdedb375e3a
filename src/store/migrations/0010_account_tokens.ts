// One-time links sent to an account's owner: password resets (from the operator's CLI or
// "Forgot password"), and sign-ups waiting for their email to be confirmed (the account is
// created only then, so an unconfirmed address takes no email and gets no credits). Only
// the token's SHA-256 is stored, so a copy of the database cannot be replayed as links; a
// token is used once (used_at) and expires.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .createTable('account_tokens')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('purpose', 'varchar(40)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('used_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('account_tokens_account_id').on('account_tokens').column('account_id').execute();

  await db.schema
    .createTable('pending_sign_ups')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('email', 'varchar(320)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)')
    .addColumn('password_hash', 'varchar(300)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('used_at', 'varchar(40)')
    .execute();
}
