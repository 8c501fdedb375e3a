// Invitations to an organisation: an address is asked to join with a role. The link mailed
// (or handed over) carries a random token; the row keeps only its SHA-256. An invitation is
// open until it expires or one of accepted_at, declined_at, revoked_at is set, each by a
// conditional update, so of two answers racing exactly one counts.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .createTable('org_invitations')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('org_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'varchar(320)', (c) => c.notNull()) // lower-case
    .addColumn('role', 'varchar(20)', (c) => c.notNull())
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('invited_by', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('accepted_at', 'varchar(40)')
    .addColumn('declined_at', 'varchar(40)')
    .addColumn('revoked_at', 'varchar(40)')
    .execute();
  // An organisation's pending invitations (the dashboard's list).
  await db.schema.createIndex('org_invitations_org_id').on('org_invitations').column('org_id').execute();
}
