// The part of KyselyStore (kysely-store.ts) for customer webhooks (webhooks.ts): endpoints,
// the outbox and its deliveries. Multi-row writes run in a transaction of their own, or
// in the caller's.
import { KyselyPaymentStore } from './kysely-payment-store.js';
import * as webhooks from './webhooks.js';
import type {
  ClaimedWebhookDelivery,
  NewWebhookEndpoint,
  NewWebhookEvent,
  WebhookAttemptOutcome,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
  WebhookEndpoint,
  WebhookStore,
} from './webhook-store.js';

type Claim = Pick<ClaimedWebhookDelivery, 'delivery' | 'leaseToken'>;

export abstract class KyselyWebhookStore extends KyselyPaymentStore implements WebhookStore {
  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    return webhooks.createWebhookEndpoint(this.db, endpoint);
  }

  findWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint | undefined> {
    return webhooks.findWebhookEndpoint(this.db, endpointId);
  }

  listWebhookEndpoints(accountId: string): Promise<WebhookEndpoint[]> {
    return webhooks.listWebhookEndpoints(this.db, accountId);
  }

  rotateWebhookSecret(endpointId: string, secret: string, previousUntil: string): Promise<WebhookEndpoint | undefined> {
    return this.write((trx) => webhooks.rotateWebhookSecret(trx, endpointId, secret, previousUntil));
  }

  disableWebhookEndpoint(endpointId: string, at: string): Promise<WebhookEndpoint | undefined> {
    return this.write((trx) => webhooks.disableWebhookEndpoint(trx, endpointId, at));
  }

  addWebhookEvent(event: NewWebhookEvent): Promise<number> {
    return this.write((trx) => webhooks.addWebhookEvent(trx, event));
  }

  findWebhookDelivery(deliveryId: number): Promise<WebhookDelivery | undefined> {
    return webhooks.findWebhookDelivery(this.db, deliveryId);
  }

  listWebhookDeliveries(endpointId: string, options?: { limit?: number }): Promise<WebhookDeliveryWithAttempts[]> {
    return webhooks.listWebhookDeliveries(this.db, endpointId, options);
  }

  redeliverWebhook(deliveryId: number, at: string): Promise<WebhookDelivery | undefined> {
    return this.write((trx) => webhooks.redeliverWebhook(trx, deliveryId, at));
  }

  claimWebhookDeliveries(at: string, leaseUntil: string, limit: number): Promise<ClaimedWebhookDelivery[]> {
    return webhooks.claimWebhookDeliveries(this.db, at, leaseUntil, limit);
  }

  recordWebhookAttempt(claim: Claim, outcome: WebhookAttemptOutcome): Promise<void> {
    return this.write((trx) => webhooks.recordWebhookAttempt(trx, claim, outcome));
  }

  releaseWebhookDelivery(claim: Claim): Promise<void> {
    return webhooks.releaseWebhookDelivery(this.db, claim);
  }
}
