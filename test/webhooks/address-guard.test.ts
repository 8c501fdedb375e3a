// An account's endpoint may not point lmgate at its own network: loopback, private ranges
// and link-local (cloud metadata) addresses are refused at connection time, whether the
// URL names the address or a name resolving to it, unless the operator allows them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/webhooks/address-guard.js';
import { STORE_BACKENDS } from '../helpers/store-backends.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { openWebhookFixture, type WebhookFixture } from './webhook-fixture.js';

describe('private addresses', () => {
  it('are told apart from public ones, IPv4 written as IPv6 included', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });
});

describe.each(STORE_BACKENDS.filter((backend) => backend.name === 'sqlite'))('a delivery to a private address on $name', (backend) => {
  let f: WebhookFixture;
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    f = await openWebhookFixture(backend);
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await receiver.close();
    await f.close();
  });

  it('is refused, by address and by a name resolving to it, and allowed when the operator says so', async () => {
    const byAddress = await f.commands.webhooks.add(f.account.id, receiver.url, ['balance.low']);
    const byName = await f.commands.webhooks.add(f.account.id, receiver.url.replace('127.0.0.1', 'localhost'), ['balance.low']);
    const id = await f.commands.webhooks.sendTest(byAddress.endpoint.id, f.account.id);
    await f.commands.webhooks.sendTest(byName.endpoint.id, f.account.id);
    expect(await f.worker({ allowPrivateAddresses: false }).deliverDue()).toBe(2);
    expect(receiver.received).toEqual([]);
    for (const endpoint of [byAddress.endpoint, byName.endpoint]) {
      const [delivery] = await f.store.listWebhookDeliveries(endpoint.id);
      expect(delivery!.attemptLog[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: .* is a private or loopback address/) });
    }

    f.advance(5_000);
    expect(await f.worker({ allowPrivateAddresses: true }).deliverDue()).toBe(2);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toContain(id);
  });
});
