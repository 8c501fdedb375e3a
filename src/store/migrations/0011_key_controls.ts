// A key's own controls, each null when unset (the key then behaves as its account allows):
// when it stops working, which models (glob patterns) and client addresses (CIDR) it may
// use, and its own requests per minute. Lists are stored as JSON arrays.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('expires_at', 'varchar(40)').execute();
  await db.schema.alterTable('api_keys').addColumn('allowed_models', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('allowed_ips', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('rpm', 'integer').execute();
}
