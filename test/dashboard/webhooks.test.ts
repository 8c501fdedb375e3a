// Webhook endpoints through the dashboard, on SQLite and PostgreSQL: registered with the
// secret shown once, rotated, removed; each endpoint's deliveries with every attempt, a
// delivery sent again and a test event, as a real endpoint on loopback receives them;
// another account's endpoints unreachable.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { verified } from '../webhooks/webhook-fixture.js';
import { sessionClient, type DashboardClient } from './dashboard-client.js';

describe.each(['sqlite', 'postgres'] as const)('dashboard webhooks on %s', (database) => {
  let t: TestApp;
  let alice: DashboardClient;
  let bob: DashboardClient;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // Retries 100 ms after a failure, so a test sees one without waiting seconds.
    t = await startApp({ database, webhooks: { allowPrivateAddresses: true, pollMs: 20, schedule: { delaysMs: [100], maxAgeMs: 60_000 } } });
    [alice, bob] = await Promise.all([sessionClient(t), sessionClient(t)]);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer(() => 200);
  });

  it('registers an endpoint, showing its secret once, and lists it without the secret', async () => {
    expect((await alice.get('/webhooks')).body).toEqual({ endpoints: [], eventTypes: ['balance.low', 'budget.threshold', 'payment.succeeded', 'payment.failed', 'key.revoked', 'subscription.updated'] });
    const created = await alice.post('/webhooks', { url: receiver.url, eventTypes: ['key.revoked', 'balance.low'] });
    expect(created.status, created.text).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(created.body.endpoint).toEqual({ id: expect.stringMatching(/^whep_/), url: receiver.url, eventTypes: ['key.revoked', 'balance.low'], createdAt: expect.any(String), previousSecretUntil: null });
    const listed = await alice.get('/webhooks');
    expect(listed.body.endpoints).toEqual([created.body.endpoint]);
    expect(listed.text).not.toContain(created.body.secret);
    expect((await bob.get('/webhooks')).body.endpoints).toEqual([]);
    await alice.delete(`/webhooks/${created.body.endpoint.id}`);
  });

  it('refuses a URL that is not http(s) and event types it does not know, field by field', async () => {
    const badUrl = await alice.post('/webhooks', { url: 'ftp://example.test/x', eventTypes: ['key.revoked'] });
    expect(badUrl.status).toBe(422);
    expect(JSON.stringify(badUrl.body)).toContain('https://');
    const badType = await alice.post('/webhooks', { url: receiver.url, eventTypes: ['key.created'] });
    expect(badType.status).toBe(422);
    expect(JSON.stringify(badType.body)).toContain('key.created');
    expect((await alice.post('/webhooks', { url: receiver.url, eventTypes: [] })).status).toBe(422);
  });

  it('sends a test event, shows the delivery with its attempts, and sends it again with the same webhook-id', async () => {
    const { endpoint, secret } = (await alice.post('/webhooks', { url: receiver.url, eventTypes: ['balance.low'] })).body;
    receiver.answer(() => (receiver.received.length === 1 ? 500 : 200));
    const sent = await alice.post(`/webhooks/${endpoint.id}/test`);
    expect(sent.status, sent.text).toBe(200);
    await receiver.waitFor(1);
    expect(verified(secret, receiver.received[0]!)).toMatchObject({ type: 'webhook.test', data: { endpoint_id: endpoint.id } });
    expect(receiver.received[0]!.headers['webhook-id']).toBe(sent.body.eventId);

    const deliveries = async () => (await alice.get(`/webhooks/${endpoint.id}/deliveries`)).body.deliveries;
    await expect.poll(async () => (await deliveries())[0]?.status).toBe('delivered');
    const [first] = await deliveries();
    expect(first).toEqual({
      id: expect.any(Number),
      eventId: sent.body.eventId,
      eventType: 'webhook.test',
      status: 'delivered',
      attempts: 2,
      nextAttemptAt: null,
      deliveredAt: expect.any(String),
      createdAt: expect.any(String),
      attemptLog: [
        { attemptedAt: expect.any(String), statusCode: 500, durationMs: expect.any(Number), error: 'answered HTTP 500' },
        { attemptedAt: expect.any(String), statusCode: 200, durationMs: expect.any(Number), error: null },
      ],
    });
    expect(receiver.received[1]!.headers['webhook-id']).toBe(sent.body.eventId);

    const again = await alice.post(`/webhooks/deliveries/${first.id}/retry`);
    expect(again.status, again.text).toBe(200);
    expect(again.body.delivery).toMatchObject({ eventId: sent.body.eventId, status: 'pending', attempts: 0 });
    await receiver.waitFor(3);
    expect(receiver.received[2]!.headers['webhook-id']).toBe(sent.body.eventId);
    expect(receiver.received[2]!.body).toBe(receiver.received[0]!.body);
    await expect.poll(async () => (await deliveries()).find((d: { id: number }) => d.id === again.body.delivery.id)?.status).toBe('delivered');
    await alice.delete(`/webhooks/${endpoint.id}`);
  });

  it('rotates the secret: the new one shown once, both signing for a day', async () => {
    const { endpoint, secret: oldSecret } = (await alice.post('/webhooks', { url: receiver.url, eventTypes: ['balance.low'] })).body;
    const rotated = await alice.post(`/webhooks/${endpoint.id}/rotate`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).not.toBe(oldSecret);
    expect(Date.parse(rotated.body.endpoint.previousSecretUntil) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    await alice.post(`/webhooks/${endpoint.id}/test`);
    await receiver.waitFor(1);
    expect(() => verified(rotated.body.secret, receiver.received[0]!)).not.toThrow();
    expect(() => verified(oldSecret, receiver.received[0]!)).not.toThrow();
    await alice.delete(`/webhooks/${endpoint.id}`);
  });

  it('keeps another account’s endpoints and deliveries out of reach (404), and a removed endpoint gone', async () => {
    const { endpoint } = (await alice.post('/webhooks', { url: receiver.url, eventTypes: ['balance.low'] })).body;
    await alice.post(`/webhooks/${endpoint.id}/test`);
    await receiver.waitFor(1);
    const [delivery] = (await alice.get(`/webhooks/${endpoint.id}/deliveries`)).body.deliveries;
    for (const res of [
      await bob.get(`/webhooks/${endpoint.id}/deliveries`),
      await bob.post(`/webhooks/${endpoint.id}/test`),
      await bob.post(`/webhooks/${endpoint.id}/rotate`),
      await bob.post(`/webhooks/deliveries/${delivery.id}/retry`),
      await bob.delete(`/webhooks/${endpoint.id}`),
    ]) {
      expect(res.status).toBe(404);
    }
    expect((await alice.delete(`/webhooks/${endpoint.id}`)).status).toBe(200);
    expect((await alice.delete(`/webhooks/${endpoint.id}`)).status).toBe(404);
    expect((await alice.get('/webhooks')).body.endpoints).toEqual([]);
  });
});
