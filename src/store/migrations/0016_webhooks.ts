// Customer webhooks (Standard Webhooks): the endpoints an account registers, the outbox of
// events written in the same transaction as the change that caused them, one delivery per
// endpoint and event (leased by the instance sending it), and every attempt made, for the
// dashboard. No foreign key from an event or a delivery to its endpoint's account beyond
// the endpoint's own: the history outlives a removed endpoint (it is disabled, not deleted).
import type { Kysely } from 'kysely';
import { isPostgres, type MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  const serial = isPostgres(db) ? 'bigserial' : 'integer';
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('url', 'varchar(2000)', (c) => c.notNull())
    .addColumn('event_types', 'text', (c) => c.notNull()) // JSON list of event types
    // `whsec_` + base64: kept as is, since signing needs it.
    .addColumn('secret', 'varchar(200)', (c) => c.notNull())
    // After a rotation the old secret signs beside the new one until then.
    .addColumn('previous_secret', 'varchar(200)')
    .addColumn('previous_secret_until', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('disabled_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('webhook_endpoints_account_id').on('webhook_endpoints').column('account_id').execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey()) // msg_…, the webhook-id header
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('type', 'varchar(60)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull()) // the body sent, as JSON
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_events_account_id').on('webhook_events').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', serial, (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('event_id', 'varchar(40)', (c) => c.notNull().references('webhook_events.id'))
    .addColumn('endpoint_id', 'varchar(40)', (c) => c.notNull().references('webhook_endpoints.id'))
    .addColumn('status', 'varchar(20)', (c) => c.notNull()) // pending | delivered | failed
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'varchar(40)', (c) => c.notNull())
    // The instance sending it holds it until then (lease_token says which one).
    .addColumn('lease_until', 'varchar(40)')
    .addColumn('lease_token', 'varchar(40)')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'varchar(500)')
    .addColumn('delivered_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  // An endpoint's oldest pending delivery goes first: found by this index.
  await db.schema.createIndex('webhook_deliveries_endpoint_status').on('webhook_deliveries').columns(['endpoint_id', 'status', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_status_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', serial, (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('delivery_id', isPostgres(db) ? 'bigint' : 'integer', (c) => c.notNull().references('webhook_deliveries.id'))
    .addColumn('attempted_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('status_code', 'integer') // null: no answer (refused, timed out)
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'varchar(500)')
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery_id').on('webhook_attempts').columns(['delivery_id', 'id']).execute();
}
