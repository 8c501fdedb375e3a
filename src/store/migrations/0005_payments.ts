// Payments through Stripe: every webhook event received (processed once, by its id), the
// payments it records, each account's Stripe customer and auto-recharge settings, and the
// subscription fields the request path needs (grace after a failed payment, cancellation).
//
// Amounts of money are BIGINT minor units (cents) as Stripe counts them; credits stay in
// micro-credits. Flags are integers 0/1 for the reason given in migration 0002.
import { sql, type Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  // On the account row because the request path checks them from its cached account.
  await db.schema.alterTable('accounts').addColumn('subscription_grace_until', 'varchar(40)').execute();
  await db.schema
    .alterTable('accounts')
    .addColumn('subscription_cancel_at_period_end', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('stripe_customers')
    .addColumn('account_id', 'varchar(40)', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('customer_id', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('subscription_id', 'varchar(255)')
    // Stripe's time (Unix seconds) of the newest subscription state applied: an older
    // event arriving late must not overwrite it.
    .addColumn('state_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('auto_recharges')
    .addColumn('account_id', 'varchar(40)', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('threshold_micros', 'bigint', (c) => c.notNull().check(sql`threshold_micros >= 0`))
    .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
    .addColumn('enabled', 'integer', (c) => c.notNull().check(sql`enabled in (0, 1)`))
    // 1 until a charge fires; set again once the balance is back at or above the threshold.
    .addColumn('armed', 'integer', (c) => c.notNull().check(sql`armed in (0, 1)`))
    .addColumn('sequence', 'integer', (c) => c.notNull().defaultTo(0)) // charges fired, for idempotency keys
    .addColumn('notice', 'varchar(500)')
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('stripe_events')
    .addColumn('id', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('type', 'varchar(100)', (c) => c.notNull())
    .addColumn('account_id', 'varchar(40)')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull()) // Stripe's, Unix seconds
    .addColumn('processed_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('payments')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'varchar(20)', (c) => c.notNull()) // top_up | auto_recharge | subscription
    .addColumn('status', 'varchar(20)', (c) => c.notNull()) // pending | paid | refunded | disputed | failed
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor >= 0`))
    .addColumn('refunded_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('credits_micros', 'bigint', (c) => c.notNull().check(sql`credits_micros >= 0`))
    .addColumn('checkout_session_id', 'varchar(255)', (c) => c.unique())
    .addColumn('payment_intent_id', 'varchar(255)', (c) => c.unique())
    .addColumn('invoice_id', 'varchar(255)', (c) => c.unique())
    .addColumn('receipt_url', 'varchar(2000)')
    .addColumn('invoice_url', 'varchar(2000)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addCheckConstraint('payments_names_stripe_object', sql`checkout_session_id is not null or payment_intent_id is not null or invoice_id is not null`)
    .execute();
  await db.schema.createIndex('payments_account_id_created_at').on('payments').columns(['account_id', 'created_at']).execute();
}
