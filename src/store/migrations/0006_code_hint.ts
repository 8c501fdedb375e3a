// The last characters of each redemption code, kept beside its hash so `codes list` can
// say which code is which without storing the code (too few characters to guess it from).
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema.alterTable('redemption_codes').addColumn('hint', 'varchar(20)').execute();
}
