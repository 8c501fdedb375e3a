// Customer webhook endpoints: registered (the signing secret shown once), rotated (the old
// secret keeps signing beside the new one for a day), removed; a delivery sent again, a
// test event sent. `ownerId`, when given, confines each to that account's endpoints, so
// another account's endpoint is indistinguishable from a missing one.
import { randomBase62 } from '../ids.js';
import { NotFoundInStoreError } from '../errors.js';
import type { WebhookDelivery, WebhookEndpoint } from '../store/webhook-store.js';
import { parseEndpointUrl, parseEventTypes } from '../webhooks/endpoint-input.js';
import { recordWebhookEvent, WEBHOOK_TEST_EVENT } from '../webhooks/events.js';
import { generateWebhookSecret } from '../webhooks/signature.js';
import { CommandSet } from './unit-of-work.js';

/** How long the secret a rotation replaces still signs. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface EndpointWithSecret {
  endpoint: WebhookEndpoint;
  /** Shown once, at creation or rotation. */
  secret: string;
}

export class WebhookCommands extends CommandSet {
  /** Throws ValidationError for a URL or event types it cannot take. */
  async add(accountId: string, url: string, eventTypes: readonly string[]): Promise<EndpointWithSecret> {
    const secret = generateWebhookSecret();
    const endpoint = await this.store.createWebhookEndpoint({
      id: `whep_${randomBase62(20)}`,
      accountId,
      url: parseEndpointUrl(url),
      eventTypes: parseEventTypes(eventTypes),
      secret,
      createdAt: new Date().toISOString(),
    });
    return { endpoint, secret };
  }

  async rotate(endpointId: string, ownerId?: string, now: Date = new Date()): Promise<EndpointWithSecret> {
    await this.owned(endpointId, ownerId);
    const secret = generateWebhookSecret();
    const endpoint = await this.store.rotateWebhookSecret(endpointId, secret, new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString());
    if (!endpoint) throw new NotFoundInStoreError('webhook endpoint', endpointId);
    return { endpoint, secret };
  }

  async remove(endpointId: string, ownerId?: string): Promise<WebhookEndpoint> {
    await this.owned(endpointId, ownerId);
    const endpoint = await this.store.disableWebhookEndpoint(endpointId, new Date().toISOString());
    if (!endpoint) throw new NotFoundInStoreError('webhook endpoint', endpointId);
    return endpoint;
  }

  /** "Send again": the delivery's event once more to its endpoint, with the same webhook-id. */
  async redeliver(deliveryId: number, ownerId?: string): Promise<WebhookDelivery> {
    const delivery = await this.store.findWebhookDelivery(deliveryId);
    if (!delivery) throw new NotFoundInStoreError('webhook delivery', String(deliveryId));
    await this.owned(delivery.endpointId, ownerId);
    const again = await this.store.redeliverWebhook(deliveryId, new Date().toISOString());
    if (!again) throw new NotFoundInStoreError('webhook delivery', String(deliveryId));
    return again;
  }

  /** A `webhook.test` event to this endpoint alone; its id. */
  async sendTest(endpointId: string, ownerId?: string): Promise<string> {
    const endpoint = await this.owned(endpointId, ownerId);
    const event = await this.commit((tx) => recordWebhookEvent(tx, { accountId: endpoint.accountId, type: WEBHOOK_TEST_EVENT, data: { endpoint_id: endpoint.id }, endpointId: endpoint.id }));
    return event.id;
  }

  private async owned(endpointId: string, ownerId: string | undefined): Promise<WebhookEndpoint> {
    const endpoint = await this.store.findWebhookEndpoint(endpointId);
    if (!endpoint || endpoint.disabledAt !== null || (ownerId !== undefined && endpoint.accountId !== ownerId)) throw new NotFoundInStoreError('webhook endpoint', endpointId);
    return endpoint;
  }
}
