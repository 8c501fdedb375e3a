// Why a key was revoked when its owner did not do it: `leaked` (reported found in public),
// with where it was found, so the dashboard can tell the account.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('revoked_reason', 'varchar(20)').execute();
  await db.schema.alterTable('api_keys').addColumn('leak_url', 'varchar(2000)').execute();
}
