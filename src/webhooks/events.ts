// The events customers' webhook endpoints are sent, with the data each carries, and the one
// way to record one: in the outbox, in the transaction of the change it tells of, so an
// event is sent if and only if its change committed.
import { randomBase62 } from '../ids.js';
import type { WebhookStore } from '../store/webhook-store.js';

/** What an endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES = ['balance.low', 'budget.threshold', 'payment.succeeded', 'payment.failed', 'key.revoked', 'subscription.updated'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent to one endpoint when its owner asks (never subscribed to). */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

export function isWebhookEventType(type: string): type is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}

/** The account's balance fell below its alert threshold. */
export interface BalanceLowData {
  account_id: string;
  balance_micros: number;
  threshold_micros: number;
}

/** Spending in a budget's period crossed one of its thresholds (a share of its limit). */
export interface BudgetThresholdData {
  account_id: string;
  /** The member the budget is for; null for the organisation's own budget. */
  member_id: string | null;
  period: 'month';
  limit_micros: number;
  spent_micros: number;
  threshold_percent: number;
}

export interface PaymentSucceededData {
  account_id: string;
  payment_id: string;
  kind: 'top_up' | 'auto_recharge' | 'subscription';
  amount_minor: number;
  currency: string;
  credits_micros: number;
}

export interface PaymentFailedData {
  account_id: string;
  kind: 'auto_recharge' | 'subscription';
  /** The provider's reference: a payment intent or an invoice. */
  reference: string;
  reason: string | null;
}

export interface KeyRevokedData {
  account_id: string;
  key_id: string;
  name: string;
  prefix: string;
  last_four: string;
  /** owner: the account itself; operator: lmgate's operator; leaked: reported found in public. */
  reason: 'owner' | 'operator' | 'leaked';
  revoked_at: string;
}

export interface SubscriptionUpdatedData {
  account_id: string;
  tier: string;
  status: string;
  period_end: string | null;
  cancel_at_period_end: boolean;
}

export interface WebhookTestData {
  endpoint_id: string;
}

export interface WebhookEventData {
  'balance.low': BalanceLowData;
  'budget.threshold': BudgetThresholdData;
  'payment.succeeded': PaymentSucceededData;
  'payment.failed': PaymentFailedData;
  'key.revoked': KeyRevokedData;
  'subscription.updated': SubscriptionUpdatedData;
  'webhook.test': WebhookTestData;
}

/** The body every delivery of an event sends (Standard Webhooks' recommended shape). */
export interface WebhookBody<T extends keyof WebhookEventData = keyof WebhookEventData> {
  type: T;
  timestamp: string;
  data: WebhookEventData[T];
}

/** The part of the store recording needs: a transaction's, the change's own. */
export type WebhookOutbox = Pick<WebhookStore, 'addWebhookEvent'>;

export interface RecordedWebhookEvent {
  id: string;
  /** How many endpoints it goes to. */
  deliveries: number;
}

/**
 * Records the event and a delivery for every enabled endpoint of the account subscribed to
 * its type. Call it with the command's transaction (`tx`), never the store outside it.
 */
export async function recordWebhookEvent<T extends keyof WebhookEventData>(
  tx: WebhookOutbox,
  event: { accountId: string; type: T; data: WebhookEventData[T]; endpointId?: string },
  now: Date = new Date(),
): Promise<RecordedWebhookEvent> {
  const id = newWebhookEventId();
  const timestamp = now.toISOString();
  const body: WebhookBody<T> = { type: event.type, timestamp, data: event.data };
  const deliveries = await tx.addWebhookEvent({ id, accountId: event.accountId, type: event.type, payload: JSON.stringify(body), createdAt: timestamp, endpointId: event.endpointId });
  return { id, deliveries };
}

/** `msg_` and 24 base62 characters, the `webhook-id` of every delivery of the event. */
function newWebhookEventId(): string {
  return `msg_${randomBase62(24)}`;
}
