// A customer's webhook endpoint that hangs or refuses connections never slows the API: the
// deliveries go out from the background sender, off the request path, and API requests
// are answered while a delivery still waits for its answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

describe('a dead webhook endpoint and the API', () => {
  let t: TestApp;
  let hanging: WebhookReceiver;
  let refusing: WebhookReceiver;

  beforeAll(async () => {
    t = await startApp({ webhooks: { allowPrivateAddresses: true, pollMs: 20, timeoutMs: 20_000 } });
    hanging = await startWebhookReceiver();
    hanging.answer(() => 'hang');
    refusing = await startWebhookReceiver();
    await refusing.down();
  });
  afterAll(async () => {
    await t?.close();
    await hanging?.close();
    await refusing?.close();
  });

  it('answers API requests while a delivery hangs and another is refused', async () => {
    const { account, apiKey } = await t.createAccount();
    const hangingEndpoint = (await t.app.commands.webhooks.add(account.id, hanging.url, ['key.revoked'])).endpoint;
    const refusingEndpoint = (await t.app.commands.webhooks.add(account.id, refusing.url, ['key.revoked'])).endpoint;
    for (let i = 0; i < 3; i++) {
      const { record } = await t.app.commands.keys.create(account.id, `spare ${i}`);
      await t.app.commands.keys.revoke(record.id, account.id);
    }
    await hanging.waitFor(1);
    await expect.poll(async () => (await t.store.listWebhookDeliveries(refusingEndpoint.id)).at(-1)?.attempts ?? 0).toBeGreaterThan(0);

    const client = t.client(apiKey);
    for (let i = 0; i < 10; i++) {
      const answer = await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: `ping ${i}` }] });
      expect(answer.choices[0]!.message.content).toContain(`ping ${i}`);
    }
    expect((await client.models.list()).data.length).toBeGreaterThan(0);

    // All of it was answered while the first delivery still waited for its endpoint: its
    // attempt is not recorded yet, and the events behind it are untried.
    expect(hanging.received).toHaveLength(1);
    const deliveries = await t.store.listWebhookDeliveries(hangingEndpoint.id);
    expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
      ['pending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
    const refused = await t.store.listWebhookDeliveries(refusingEndpoint.id);
    expect(refused.at(-1)!.attemptLog[0]).toMatchObject({ statusCode: null, error: 'connection refused' });
  });
});
