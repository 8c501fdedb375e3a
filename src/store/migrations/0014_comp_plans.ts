// Complimentary plans: the operator gives an account a tier that needs a subscription
// without one (`accounts set-tier A pro --comp [--until DATE]`). `comp_tier` names the tier
// the comp was given on, so a later tier change ends it; `comp_until` ends it by itself
// (null: until the operator takes it back).
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('comp_tier', 'varchar(100)').execute();
  await db.schema.alterTable('accounts').addColumn('comp_until', 'varchar(40)').execute();
}
