// Customer webhooks in the store (the WebhookStore port, webhook-store.ts): endpoints, the
// outbox of events with one delivery per endpoint, and the leases by which instances take
// turns sending them. The same SQL on SQLite and PostgreSQL: a claim is a conditional
// UPDATE (PostgreSQL re-checks its WHERE on the row a concurrent claim committed, SQLite
// has one writer), so two instances never hold one delivery at once.
import type { Selectable } from 'kysely';
import { randomBase62 } from '../ids.js';
import { checkLimit, type Db } from './sql.js';
import type {
  ClaimedWebhookDelivery,
  NewWebhookEndpoint,
  NewWebhookEvent,
  WebhookAttempt,
  WebhookAttemptOutcome,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhookDeliveryWithAttempts,
  WebhookEndpoint,
  WebhookEvent,
} from './webhook-store.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable, WebhookEventsTable } from './webhook-tables.js';

type Claim = Pick<ClaimedWebhookDelivery, 'delivery' | 'leaseToken'>;

export async function createWebhookEndpoint(db: Db, endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
  await db
    .insertInto('webhook_endpoints')
    .values({
      id: endpoint.id,
      account_id: endpoint.accountId,
      url: endpoint.url,
      event_types: JSON.stringify(endpoint.eventTypes),
      secret: endpoint.secret,
      previous_secret: null,
      previous_secret_until: null,
      created_at: endpoint.createdAt,
      disabled_at: null,
    })
    .execute();
  return (await findWebhookEndpoint(db, endpoint.id))!;
}

export async function findWebhookEndpoint(db: Db, endpointId: string): Promise<WebhookEndpoint | undefined> {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirst();
  return row && toEndpoint(row);
}

export async function listWebhookEndpoints(db: Db, accountId: string): Promise<WebhookEndpoint[]> {
  const rows = await db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).where('disabled_at', 'is', null).orderBy('created_at').orderBy('id').execute();
  return rows.map(toEndpoint);
}

/** In the caller's transaction. */
export async function rotateWebhookSecret(trx: Db, endpointId: string, secret: string, previousUntil: string): Promise<WebhookEndpoint | undefined> {
  const updated = await trx
    .updateTable('webhook_endpoints')
    .set((eb) => ({ previous_secret: eb.ref('secret'), previous_secret_until: previousUntil, secret }))
    .where('id', '=', endpointId)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 0 ? undefined : findWebhookEndpoint(trx, endpointId);
}

/** In the caller's transaction. */
export async function disableWebhookEndpoint(trx: Db, endpointId: string, at: string): Promise<WebhookEndpoint | undefined> {
  const updated = await trx.updateTable('webhook_endpoints').set({ disabled_at: at }).where('id', '=', endpointId).where('disabled_at', 'is', null).executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return undefined;
  await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: 'the endpoint was removed', lease_until: null, lease_token: null })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
  return findWebhookEndpoint(trx, endpointId);
}

export async function addWebhookEvent(db: Db, event: NewWebhookEvent): Promise<number> {
  await db.insertInto('webhook_events').values({ id: event.id, account_id: event.accountId, type: event.type, payload: event.payload, created_at: event.createdAt }).execute();
  let query = db.selectFrom('webhook_endpoints').selectAll().where('disabled_at', 'is', null);
  query = event.endpointId === undefined ? query.where('account_id', '=', event.accountId) : query.where('id', '=', event.endpointId);
  const endpoints = (await query.orderBy('id').execute()).map(toEndpoint).filter((e) => event.endpointId !== undefined || e.eventTypes.includes(event.type));
  if (endpoints.length === 0) return 0;
  await db
    .insertInto('webhook_deliveries')
    .values(endpoints.map((endpoint) => pendingRow(event.id, endpoint.id, event.createdAt)))
    .execute();
  return endpoints.length;
}

export async function findWebhookDelivery(db: Db, deliveryId: number): Promise<WebhookDelivery | undefined> {
  const row = await deliveriesWithType(db).where('d.id', '=', deliveryId).executeTakeFirst();
  return row && toDelivery(row);
}

export async function listWebhookDeliveries(db: Db, endpointId: string, options: { limit?: number } = {}): Promise<WebhookDeliveryWithAttempts[]> {
  const rows = await deliveriesWithType(db)
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.id', 'desc')
    .limit(checkLimit(options.limit ?? 50))
    .execute();
  if (rows.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', rows.map((row) => row.id))
    .orderBy('id')
    .execute();
  const byDelivery = new Map<number, WebhookAttempt[]>();
  for (const attempt of attempts) {
    const list = byDelivery.get(Number(attempt.delivery_id)) ?? [];
    list.push(toAttempt(attempt));
    byDelivery.set(Number(attempt.delivery_id), list);
  }
  return rows.map((row) => ({ ...toDelivery(row), attemptLog: byDelivery.get(Number(row.id)) ?? [] }));
}

export async function redeliverWebhook(db: Db, deliveryId: number, at: string): Promise<WebhookDelivery | undefined> {
  const source = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.event_id', 'd.endpoint_id'])
    .where('d.id', '=', deliveryId)
    .where('e.disabled_at', 'is', null)
    .executeTakeFirst();
  if (!source) return undefined;
  const inserted = await db.insertInto('webhook_deliveries').values(pendingRow(source.event_id, source.endpoint_id, at)).returning('id').executeTakeFirstOrThrow();
  return findWebhookDelivery(db, Number(inserted.id));
}

export async function claimWebhookDeliveries(db: Db, at: string, leaseUntil: string, limit: number): Promise<ClaimedWebhookDelivery[]> {
  // The head of each endpoint's queue: its oldest pending delivery. Later ones wait for it
  // to be delivered or given up, so an endpoint receives its events in order.
  const heads = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select('d.id')
    .where('d.status', '=', 'pending')
    .where('e.disabled_at', 'is', null)
    .where('d.next_attempt_at', '<=', at)
    .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<=', at)]))
    .where('d.id', '=', (eb) =>
      eb.selectFrom('webhook_deliveries as p').select((p) => p.fn.min('p.id').as('head')).whereRef('p.endpoint_id', '=', 'd.endpoint_id').where('p.status', '=', 'pending'),
    )
    .orderBy('d.id')
    .limit(checkLimit(limit))
    .execute();

  const claimed: ClaimedWebhookDelivery[] = [];
  for (const { id } of heads) {
    const leaseToken = randomBase62(20);
    // Another instance may have claimed, sent or rescheduled it since the read: the
    // conditions are checked again by the update itself.
    const row = await db
      .updateTable('webhook_deliveries')
      .set({ lease_until: leaseUntil, lease_token: leaseToken })
      .where('id', '=', Number(id))
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', at)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
      .returningAll()
      .executeTakeFirst();
    if (!row) continue;
    const event = await db.selectFrom('webhook_events').selectAll().where('id', '=', row.event_id).executeTakeFirstOrThrow();
    const endpoint = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', row.endpoint_id).executeTakeFirstOrThrow();
    claimed.push({ delivery: toDelivery({ ...row, event_type: event.type }), leaseToken, event: toEvent(event), endpoint: toEndpoint(endpoint) });
  }
  return claimed;
}

/** In the caller's transaction. */
export async function recordWebhookAttempt(trx: Db, claim: Claim, outcome: WebhookAttemptOutcome): Promise<void> {
  const { attempt } = outcome;
  await trx
    .insertInto('webhook_attempts')
    .values({ delivery_id: claim.delivery.id, attempted_at: attempt.attemptedAt, status_code: attempt.statusCode, duration_ms: attempt.durationMs, error: attempt.error })
    .execute();
  await trx
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      status: outcome.status,
      next_attempt_at: outcome.nextAttemptAt,
      last_status_code: attempt.statusCode,
      last_error: attempt.error,
      delivered_at: outcome.status === 'delivered' ? attempt.attemptedAt : null,
      lease_until: null,
      lease_token: null,
    }))
    .where('id', '=', claim.delivery.id)
    .where('lease_token', '=', claim.leaseToken)
    .execute();
}

export async function releaseWebhookDelivery(db: Db, claim: Claim): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ lease_until: null, lease_token: null }).where('id', '=', claim.delivery.id).where('lease_token', '=', claim.leaseToken).execute();
}

function pendingRow(eventId: string, endpointId: string, at: string) {
  return { event_id: eventId, endpoint_id: endpointId, status: 'pending', attempts: 0, next_attempt_at: at, lease_until: null, lease_token: null, last_status_code: null, last_error: null, delivered_at: null, created_at: at };
}

function deliveriesWithType(db: Db) {
  return db.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as ev', 'ev.id', 'd.event_id').selectAll('d').select('ev.type as event_type');
}

function toEndpoint(row: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    eventTypes: JSON.parse(row.event_types) as string[],
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: row.previous_secret_until,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
  };
}

function toEvent(row: Selectable<WebhookEventsTable>): WebhookEvent {
  return { id: row.id, accountId: row.account_id, type: row.type, payload: row.payload, createdAt: row.created_at };
}

function toDelivery(row: Selectable<WebhookDeliveriesTable> & { event_type: string }): WebhookDelivery {
  return {
    id: Number(row.id),
    eventId: row.event_id,
    eventType: row.event_type,
    endpointId: row.endpoint_id,
    status: row.status as WebhookDeliveryStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
  };
}

function toAttempt(row: Selectable<WebhookAttemptsTable>): WebhookAttempt {
  return { attemptedAt: row.attempted_at, statusCode: row.status_code, durationMs: Number(row.duration_ms), error: row.error };
}
