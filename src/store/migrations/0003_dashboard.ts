// The customer dashboard: passwords, server-side sessions and redemption codes.
//
// Passwords live in their own table rather than a nullable accounts column: every account
// query (the key cache, the CLI, the change feed's reloads) selects whole account rows, and
// a secret that is never selected cannot leak through one of them. An account created by
// the CLI simply has no row, and cannot sign in.
import { sql, type Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .createTable('account_passwords')
    .addColumn('account_id', 'varchar(40)', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('password_hash', 'varchar(300)', (c) => c.notNull()) // scrypt$N$r$p$salt$hash
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  // A session is its row: deleting it signs the browser out. Only the token's SHA-256 is
  // stored, so a copy of the database cannot be replayed as cookies.
  await db.schema
    .createTable('sessions')
    .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('csrf_token', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('last_seen_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  // "Sign out everywhere else" after a password change, and pruning expired rows.
  await db.schema.createIndex('sessions_account_id').on('sessions').column('account_id').execute();
  await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();

  await db.schema
    .createTable('redemption_codes')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('code_hash', 'varchar(64)', (c) => c.notNull().unique()) // SHA-256 of the canonical code
    .addColumn('amount_micros', 'bigint', (c) => c.notNull().check(sql`amount_micros > 0`))
    .addColumn('expires_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('redeemed_by', 'varchar(40)', (c) => c.references('accounts.id'))
    .addColumn('redeemed_at', 'varchar(40)')
    .execute();
}
