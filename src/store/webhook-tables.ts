// Row types of the customer webhook tables (migration 0016), as Kysely sees them; the
// Database of tables.ts takes them in.
import type { Generated } from 'kysely';

export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  event_types: string; // JSON list of event types
  secret: string; // whsec_…
  previous_secret: string | null;
  previous_secret_until: string | null;
  created_at: string;
  disabled_at: string | null;
}

/** The outbox: written in the transaction of the change it tells of. */
export interface WebhookEventsTable {
  id: string; // msg_…
  account_id: string;
  type: string;
  payload: string; // the JSON body sent
  created_at: string;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  event_id: string;
  endpoint_id: string;
  status: string; // 'pending' | 'delivered' | 'failed'
  attempts: number;
  next_attempt_at: string;
  lease_until: string | null;
  lease_token: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
  created_at: string;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
