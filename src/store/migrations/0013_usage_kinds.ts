// Usage by token kind (billing/usage.ts): cached input, cache writes (5-minute and
// 1-hour) and reasoning as parts of the prompt and completion totals; where the numbers
// came from (`basis`: reported by the upstream, or counted by lmgate); how the answer
// ended (`outcome`); `shortfall_micros`, the part of the cost an account that could not pay
// was not charged; and `held_micros`, what the request held at admission (how well holds
// cover real costs is read from it). Accounts get a price multiplier in parts per million
// (1,000,000: the prices as configured). Existing rows are reported, completed answers
// without shortfall, which is what they were billed as.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  for (const column of ['cached_tokens', 'cache_write_tokens', 'cache_write_1h_tokens', 'reasoning_tokens']) {
    await db.schema.alterTable('usage_records').addColumn(column, 'integer', (c) => c.notNull().defaultTo(0)).execute();
  }
  await db.schema.alterTable('usage_records').addColumn('basis', 'varchar(10)', (c) => c.notNull().defaultTo('reported')).execute();
  await db.schema.alterTable('usage_records').addColumn('outcome', 'varchar(20)', (c) => c.notNull().defaultTo('completed')).execute();
  await db.schema.alterTable('usage_records').addColumn('shortfall_micros', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('usage_records').addColumn('held_micros', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('accounts').addColumn('price_multiplier_ppm', 'integer', (c) => c.notNull().defaultTo(1_000_000)).execute();
}
