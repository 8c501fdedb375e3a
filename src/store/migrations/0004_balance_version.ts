// A version on each account's balance, raised by every write of the balance under the
// row lock. Balances mirrored elsewhere (Redis, in shared mode) compare versions to tell a
// newer read from an older one: ledger ids cannot, since transactions commit out of id order.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('balance_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}
