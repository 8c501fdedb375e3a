// Several instances send webhooks from one store: two workers, each on its own connection
// (as two servers would be), racing over the same deliveries never send one attempt twice,
// and each endpoint still gets its events once each, in order. PostgreSQL is the shared
// mode's store; SQLite (two processes on one file) holds the same rule.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { recordWebhookEvent } from '../../src/webhooks/events.js';
import { STORE_BACKENDS } from '../helpers/store-backends.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { openWebhookFixture, type WebhookFixture } from './webhook-fixture.js';

const ENDPOINTS = 4;
const EVENTS = 12;

describe.each(STORE_BACKENDS)('webhook workers racing on $name', (backend) => {
  let f: WebhookFixture;
  let receiver: WebhookReceiver;
  let another: Store;

  beforeEach(async () => {
    f = await openWebhookFixture(backend);
    receiver = await startWebhookReceiver();
    another = f.opened.openAnother();
  });
  afterEach(async () => {
    await receiver.close();
    await another.close();
    await f.close();
  });

  it('two workers deliver every event exactly once per endpoint, in order, never the same attempt twice', async () => {
    const endpoints = [];
    for (let i = 0; i < ENDPOINTS; i++) endpoints.push((await f.commands.webhooks.add(f.account.id, `${receiver.url}?endpoint=${i}`, ['balance.low'])).endpoint);
    const eventIds: string[] = [];
    for (let n = 0; n < EVENTS; n++) {
      const data = { account_id: f.account.id, balance_micros: n, threshold_micros: 100 };
      eventIds.push((await f.store.unitOfWork((tx) => recordWebhookEvent(tx, { accountId: f.account.id, type: 'balance.low', data }))).result.id);
    }
    // Small batches and both workers looking at once, over and over: every claim is contested.
    const workers = [f.worker({ batchSize: 1 }), f.worker({ batchSize: 2 }, another)];
    const drain = async (worker: (typeof workers)[number]): Promise<void> => {
      for (let idle = 0; idle < 3; ) idle = (await worker.deliverDue()) === 0 ? idle + 1 : 0;
    };
    while (receiver.received.length < ENDPOINTS * EVENTS) {
      const before = receiver.received.length;
      await Promise.all([drain(workers[0]!), drain(workers[1]!), drain(workers[0]!), drain(workers[1]!)]);
      if (receiver.received.length === before) break;
    }

    for (let i = 0; i < ENDPOINTS; i++) {
      const got = receiver.received.filter((r) => r.url.endsWith(`endpoint=${i}`)).map((r) => r.headers['webhook-id']);
      expect(got).toEqual(eventIds);
      const deliveries = await f.store.listWebhookDeliveries(endpoints[i]!.id, { limit: 100 });
      expect(deliveries.map((d) => [d.status, d.attempts, d.attemptLog.length])).toEqual(eventIds.map(() => ['delivered', 1, 1]));
    }
    expect(receiver.received).toHaveLength(ENDPOINTS * EVENTS);
  });

  it('a delivery claimed by one worker is not claimed by another until its lease ends', async () => {
    await f.commands.webhooks.add(f.account.id, receiver.url, ['balance.low']);
    await f.store.unitOfWork((tx) => recordWebhookEvent(tx, { accountId: f.account.id, type: 'balance.low', data: { account_id: f.account.id, balance_micros: 1, threshold_micros: 2 } }));
    const at = new Date(Date.now()).toISOString();
    const leaseUntil = new Date(Date.now() + 60_000).toISOString();
    const [mine, theirs] = await Promise.all([f.store.claimWebhookDeliveries(at, leaseUntil, 10), another.claimWebhookDeliveries(at, leaseUntil, 10)]);
    expect(mine.length + theirs.length).toBe(1);
    expect(await another.claimWebhookDeliveries(new Date(Date.now() + 59_000).toISOString(), leaseUntil, 10)).toEqual([]);
    // Its holder died: after the lease, another instance takes it (at least once).
    expect(await another.claimWebhookDeliveries(new Date(Date.now() + 60_000).toISOString(), new Date(Date.now() + 120_000).toISOString(), 10)).toHaveLength(1);
  });
});
