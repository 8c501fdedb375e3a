// The account's webhook endpoints: list, register (the signing secret shown once), rotate
// the secret (the old one keeps signing for a day), remove; each endpoint's deliveries
// with every attempt, a delivery sent again, and a test event. Only the acting account's
// endpoints are reachable: another's answer 404 as missing ones do.
import { Type } from '@sinclair/typebox';
import { NotFoundInStoreError } from '../../errors.js';
import { Nullable, type JsonOf, type TypeBoxFastify } from '../../http/typebox.js';
import type { WebhookDeliveryWithAttempts, WebhookEndpoint } from '../../store/webhook-store.js';
import { MESSAGES, TRIM } from '../../validation/input-validator.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events.js';
import { requirePermission, type DashboardServices } from '../context.js';
import type * as Json from '../webhook-api-types.js';

const EndpointView = Type.Object({
  id: Type.String(),
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  createdAt: Type.String(),
  previousSecretUntil: Nullable(Type.String()),
});
const AttemptView = Type.Object({ attemptedAt: Type.String(), statusCode: Nullable(Type.Integer()), durationMs: Type.Integer(), error: Nullable(Type.String()) });
const DeliveryView = Type.Object({
  id: Type.Integer(),
  eventId: Type.String(),
  eventType: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  nextAttemptAt: Nullable(Type.String()),
  deliveredAt: Nullable(Type.String()),
  createdAt: Type.String(),
  attemptLog: Type.Array(AttemptView),
});
type EndpointView = JsonOf<typeof EndpointView, Json.WebhookEndpointView>;
type DeliveryView = JsonOf<typeof DeliveryView, Json.WebhookDeliveryView>;

const EndpointList = Type.Object({ endpoints: Type.Array(EndpointView), eventTypes: Type.Array(Type.String()) });
export type EndpointList = JsonOf<typeof EndpointList, Json.WebhookEndpointList>;
const WithSecret = Type.Object({ endpoint: EndpointView, secret: Type.String() });
export type WithSecret = JsonOf<typeof WithSecret, Json.WebhookEndpointWithSecret>;
const OneEndpoint = Type.Object({ endpoint: EndpointView });
export type OneEndpoint = JsonOf<typeof OneEndpoint, Json.OneWebhookEndpoint>;
const DeliveryList = Type.Object({ deliveries: Type.Array(DeliveryView) });
export type DeliveryList = JsonOf<typeof DeliveryList, Json.WebhookDeliveryList>;
const OneDelivery = Type.Object({ delivery: DeliveryView });
export type OneDelivery = JsonOf<typeof OneDelivery, Json.OneWebhookDelivery>;
const TestSent = Type.Object({ eventId: Type.String() });
export type TestSent = JsonOf<typeof TestSent, Json.WebhookTestSent>;

const CreateBody = Type.Object({
  url: Type.String({ [TRIM]: true, minLength: 1, maxLength: 2000, [MESSAGES]: { minLength: 'Give the URL the events go to.' } }),
  eventTypes: Type.Array(Type.String({ maxLength: 60 }), { minItems: 1, maxItems: 20, [MESSAGES]: { minItems: 'Choose at least one event type.' } }),
});
const EndpointParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const DeliveryParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const DeliveriesQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })) });

export function webhookRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store } = services;
  const webhooks = services.commands.webhooks;
  /** The acting account's endpoint; another's is as missing as one that never was. */
  const ownEndpoint = async (endpointId: string, accountId: string): Promise<WebhookEndpoint> => {
    const endpoint = await store.findWebhookEndpoint(endpointId);
    if (!endpoint || endpoint.disabledAt !== null || endpoint.accountId !== accountId) throw new NotFoundInStoreError('webhook endpoint', endpointId);
    return endpoint;
  };

  dashboard.get('/webhooks', { schema: { response: { 200: EndpointList } } }, async (request) => {
    const endpoints = await store.listWebhookEndpoints(requirePermission(request, 'webhooks').account.id);
    return { endpoints: endpoints.map(endpointView), eventTypes: [...WEBHOOK_EVENT_TYPES] };
  });

  dashboard.post('/webhooks', { schema: { body: CreateBody, response: { 201: WithSecret } } }, async (request, reply) => {
    const { endpoint, secret } = await webhooks.add(requirePermission(request, 'webhooks').account.id, request.body.url, request.body.eventTypes);
    return reply.code(201).send({ endpoint: endpointView(endpoint), secret });
  });

  dashboard.post('/webhooks/:id/rotate', { schema: { params: EndpointParams, response: { 200: WithSecret } } }, async (request) => {
    const { endpoint, secret } = await webhooks.rotate(request.params.id, requirePermission(request, 'webhooks').account.id);
    return { endpoint: endpointView(endpoint), secret };
  });

  dashboard.delete('/webhooks/:id', { schema: { params: EndpointParams, response: { 200: OneEndpoint } } }, async (request) => {
    return { endpoint: endpointView(await webhooks.remove(request.params.id, requirePermission(request, 'webhooks').account.id)) };
  });

  dashboard.get('/webhooks/:id/deliveries', { schema: { params: EndpointParams, querystring: DeliveriesQuery, response: { 200: DeliveryList } } }, async (request) => {
    const endpoint = await ownEndpoint(request.params.id, requirePermission(request, 'webhooks').account.id);
    const deliveries = await store.listWebhookDeliveries(endpoint.id, { limit: request.query.limit ?? 50 });
    return { deliveries: deliveries.map(deliveryView) };
  });

  dashboard.post('/webhooks/:id/test', { schema: { params: EndpointParams, response: { 200: TestSent } } }, async (request) => {
    return { eventId: await webhooks.sendTest(request.params.id, requirePermission(request, 'webhooks').account.id) };
  });

  dashboard.post('/webhooks/deliveries/:id/retry', { schema: { params: DeliveryParams, response: { 200: OneDelivery } } }, async (request) => {
    const delivery = await webhooks.redeliver(request.params.id, requirePermission(request, 'webhooks').account.id);
    return { delivery: deliveryView({ ...delivery, attemptLog: [] }) };
  });
}

function endpointView(endpoint: WebhookEndpoint): EndpointView {
  return { id: endpoint.id, url: endpoint.url, eventTypes: endpoint.eventTypes, createdAt: endpoint.createdAt, previousSecretUntil: endpoint.previousSecretUntil };
}

function deliveryView(delivery: WebhookDeliveryWithAttempts): DeliveryView {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.status === 'pending' ? delivery.nextAttemptAt : null,
    deliveredAt: delivery.deliveredAt,
    createdAt: delivery.createdAt,
    attemptLog: delivery.attemptLog,
  };
}
