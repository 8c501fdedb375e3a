// Alerts on a balance and on budgets. `alert_settings` holds an account's choices (a balance
// threshold, the budget percentages; null: none, or the defaults) and whether its balance
// alert is armed: a crossing disarms it with a conditional update, so of several instances
// exactly one sends it, and a top-up that lifts the balance back over arms it again.
// `budget_alerts` keeps, per budget (member_id '' for the organisation's own) and
// percentage, the month and the budget of its last alert: a later month, or a larger
// budget, makes the threshold fire again, and the upsert that records it is the claim.
import type { Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema
    .createTable('alert_settings')
    .addColumn('account_id', 'varchar(40)', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('balance_below_micros', 'bigint')
    .addColumn('balance_armed', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('budget_thresholds', 'varchar(200)') // "50,80,100"; null: the defaults
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('budget_alerts')
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('member_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('threshold_percent', 'integer', (c) => c.notNull())
    .addColumn('period', 'varchar(7)', (c) => c.notNull()) // YYYY-MM (UTC)
    .addColumn('budget_micros', 'bigint', (c) => c.notNull())
    .addColumn('fired_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('budget_alerts_pkey', ['account_id', 'member_id', 'threshold_percent'])
    .execute();
}
