// Sign-in with OpenID Connect. `oidc_identities` links a provider's (issuer, subject) to an
// account: the subject is the provider's stable id for a person, so it, not the email,
// finds the account from the second sign-in on. `sessions.auth_method` records how each
// session was made, so an organisation can require its members to come through SSO;
// every session before this one was made with a password.
import { sql, type Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .createTable('oidc_identities')
    .addColumn('issuer', 'varchar(500)', (c) => c.notNull())
    .addColumn('subject', 'varchar(255)', (c) => c.notNull()) // OIDC Core: `sub` is at most 255 ASCII characters
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'varchar(320)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('last_sign_in_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('oidc_identities_pkey', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('oidc_identities_account_id').on('oidc_identities').column('account_id').execute();

  await db.schema
    .alterTable('sessions')
    .addColumn('auth_method', 'varchar(20)', (c) => c.notNull().defaultTo(sql`'password'`))
    .execute();
}
