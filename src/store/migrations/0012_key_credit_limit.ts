// A key's credit limit (auth/key-controls.ts): at most `credit_limit_micros` spent in total
// (period `total`) or in each calendar month, UTC (`month`); both null when unset. A key's
// spending in its window is the sum of its usage records' costs, read when a process first
// needs it: the index serves that sum.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('credit_limit_micros', 'bigint').execute();
  await db.schema.alterTable('api_keys').addColumn('credit_limit_period', 'varchar(8)').execute();
  await db.schema.createIndex('usage_records_key_id_created_at').on('usage_records').columns(['key_id', 'created_at']).execute();
}
