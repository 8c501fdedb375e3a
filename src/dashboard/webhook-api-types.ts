// The dashboard API's webhook replies (/api/dashboard/webhooks*) as JSON types, beside
// api-types.ts and under its rules: camelCase, ISO 8601 UTC times, null where a value is
// absent, no imports (the web's typecheck reads this file and nothing behind it).

export interface WebhookEndpointView {
  id: string;
  url: string;
  eventTypes: string[];
  createdAt: string;
  /** After a rotation: the old secret still signs beside the new one until then. */
  previousSecretUntil: string | null;
}

export interface WebhookEndpointList {
  endpoints: WebhookEndpointView[];
  /** What an endpoint may subscribe to. */
  eventTypes: string[];
}

/** At creation and rotation: the signing secret, shown this once. */
export interface WebhookEndpointWithSecret {
  endpoint: WebhookEndpointView;
  secret: string;
}

export interface OneWebhookEndpoint {
  endpoint: WebhookEndpointView;
}

export interface WebhookAttemptView {
  attemptedAt: string;
  /** Null when no answer came (refused, timed out). */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

export interface WebhookDeliveryView {
  id: number;
  /** The webhook-id header: the same on every attempt and on a delivery sent again. */
  eventId: string;
  eventType: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** When a pending delivery is tried next; null once delivered or failed. */
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
  /** Oldest first. */
  attemptLog: WebhookAttemptView[];
}

export interface WebhookDeliveryList {
  deliveries: WebhookDeliveryView[];
}

export interface OneWebhookDelivery {
  delivery: WebhookDeliveryView;
}

export interface WebhookTestSent {
  eventId: string;
}
