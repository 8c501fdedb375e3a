// The store's part for customer webhooks, in domain words: an account's endpoints (their
// signing secrets kept, since signing needs them), the outbox of events, and deliveries
// with every attempt. Store (store.ts) extends it; webhooks.ts implements it.

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  /** The event types it is sent. */
  eventTypes: string[];
  /** `whsec_` + base64 of the key. */
  secret: string;
  /** The secret before the last rotation, which signs beside `secret` until `previousSecretUntil`. */
  previousSecret: string | null;
  previousSecretUntil: string | null;
  createdAt: string;
  /** Removed: sent nothing more, kept for its deliveries' history. */
  disabledAt: string | null;
}

export interface NewWebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  eventTypes: readonly string[];
  secret: string;
  createdAt: string;
}

/** One event of the outbox; its id is the `webhook-id` every delivery of it carries. */
export interface WebhookEvent {
  id: string;
  accountId: string;
  type: string;
  /** The body sent, as JSON text. */
  payload: string;
  createdAt: string;
}

export interface NewWebhookEvent extends WebhookEvent {
  /** Only to this endpoint, whatever it subscribed to (a test event); else every enabled endpoint of the account subscribed to the type. */
  endpointId?: string;
}

export interface WebhookAttempt {
  attemptedAt: string;
  /** Null when no answer came (refused, timed out). */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

export interface WebhookDelivery {
  id: number;
  eventId: string;
  eventType: string;
  endpointId: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

export interface WebhookDeliveryWithAttempts extends WebhookDelivery {
  /** Oldest first. */
  attemptLog: WebhookAttempt[];
}

/** A delivery an instance holds until `leaseUntil`, with what sending it needs. */
export interface ClaimedWebhookDelivery {
  delivery: WebhookDelivery;
  leaseToken: string;
  event: WebhookEvent;
  endpoint: WebhookEndpoint;
}

/** What an attempt ended as, and what the delivery becomes. */
export interface WebhookAttemptOutcome {
  attempt: WebhookAttempt;
  /** delivered, pending (again at `nextAttemptAt`), or failed (given up). */
  status: WebhookDeliveryStatus;
  nextAttemptAt: string;
}

export interface WebhookStore {
  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint>;
  findWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint | undefined>;
  /** The account's endpoints not removed, oldest first. */
  listWebhookEndpoints(accountId: string): Promise<WebhookEndpoint[]>;
  /** A new secret; the one it replaces keeps signing until `previousUntil`. Undefined when removed or unknown. */
  rotateWebhookSecret(endpointId: string, secret: string, previousUntil: string): Promise<WebhookEndpoint | undefined>;
  /** Removes an endpoint: its pending deliveries fail. Undefined when removed before or unknown. */
  disableWebhookEndpoint(endpointId: string, at: string): Promise<WebhookEndpoint | undefined>;

  /** The event, and one pending delivery per endpoint it goes to (how many, returned). Run it in the change's transaction. */
  addWebhookEvent(event: NewWebhookEvent): Promise<number>;
  findWebhookDelivery(deliveryId: number): Promise<WebhookDelivery | undefined>;
  /** Newest first, each with every attempt. */
  listWebhookDeliveries(endpointId: string, options?: { limit?: number }): Promise<WebhookDeliveryWithAttempts[]>;
  /** The event once more to the delivery's endpoint, as a new pending delivery (same event, same webhook-id). */
  redeliverWebhook(deliveryId: number, at: string): Promise<WebhookDelivery | undefined>;

  /**
   * Takes up to `limit` deliveries due at `at`, each the oldest pending one of its enabled
   * endpoint and held by no live lease, leasing them until `leaseUntil`: of instances
   * racing, one gets each (a conditional update decides).
   */
  claimWebhookDeliveries(at: string, leaseUntil: string, limit: number): Promise<ClaimedWebhookDelivery[]>;
  /** Records the attempt and what the delivery becomes, if the lease is still this claim's. */
  recordWebhookAttempt(claim: Pick<ClaimedWebhookDelivery, 'delivery' | 'leaseToken'>, outcome: WebhookAttemptOutcome): Promise<void>;
  /** Gives a claim back unattempted (the instance is stopping). */
  releaseWebhookDelivery(claim: Pick<ClaimedWebhookDelivery, 'delivery' | 'leaseToken'>): Promise<void>;
}
