// The outbox: an event is written in the transaction of the change it tells of, so a change
// that rolls back tells nothing, and every path that makes one records it: each way a key
// is revoked (its owner, the operator, a leak report) and the Stripe events that move a
// payment or a subscription (a duplicated Stripe event tells once). SQLite and PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type Stripe from 'stripe';
import { hashApiKey } from '../../src/auth/api-key.js';
import { loadConfig } from '../../src/config/load.js';
import { StripeEvents } from '../../src/payments/stripe-events.js';
import { recordWebhookEvent } from '../../src/webhooks/events.js';
import { id, stripeEvent } from '../helpers/fake-stripe.js';
import { STORE_BACKENDS } from '../helpers/store-backends.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { openWebhookFixture, verified, type WebhookFixture } from './webhook-fixture.js';

describe.each(STORE_BACKENDS)('the webhook outbox on $name', (backend) => {
  let f: WebhookFixture;
  let receiver: WebhookReceiver;
  let secret: string;
  let endpointId: string;

  beforeEach(async () => {
    f = await openWebhookFixture(backend);
    receiver = await startWebhookReceiver();
    ({ secret, endpoint: { id: endpointId } } = await f.commands.webhooks.add(f.account.id, receiver.url, ['key.revoked', 'payment.succeeded', 'payment.failed', 'subscription.updated']));
  });
  afterEach(async () => {
    await receiver.close();
    await f.close();
  });

  async function sent(): Promise<{ type: string; data: Record<string, unknown> }[]> {
    // One at a time per endpoint, in order: each look sends the next.
    const worker = f.worker();
    while ((await worker.deliverDue()) > 0);
    return receiver.received.map((request) => verified(secret, request));
  }

  it('writes the event with its change in one unit of work, and nothing when the unit of work rolls back', async () => {
    const data = { account_id: f.account.id, balance_micros: 10, threshold_micros: 100 };
    await expect(
      f.store.unitOfWork(async (tx) => {
        await tx.appendLedgerEntry({ accountId: f.account.id, kind: 'grant', amountMicros: 500, reason: 'gone' });
        await recordWebhookEvent(tx, { accountId: f.account.id, type: 'key.revoked', data: { ...data } as never });
        throw new Error('changed its mind');
      }),
    ).rejects.toThrow('changed its mind');
    expect(await f.store.balanceOf(f.account.id)).toBe(0);
    expect(await f.store.listWebhookDeliveries(endpointId)).toEqual([]);

    await f.store.unitOfWork(async (tx) => {
      await tx.appendLedgerEntry({ accountId: f.account.id, kind: 'grant', amountMicros: 500, reason: 'kept' });
      await recordWebhookEvent(tx, { accountId: f.account.id, type: 'key.revoked', data: { ...data } as never });
    });
    expect(await f.store.listWebhookDeliveries(endpointId)).toHaveLength(1);
  });

  it('a revocation that fails writes no event; revoking twice tells once', async () => {
    const { record } = await f.commands.keys.create(f.account.id, 'k');
    const other = await f.store.createAccount({ email: `not-owner-${Date.now()}@example.test`, tier: 'free' });
    await expect(f.commands.keys.revoke(record.id, other.id)).rejects.toThrow();
    expect(await f.store.listWebhookDeliveries(endpointId)).toEqual([]);
    await f.commands.keys.revoke(record.id, f.account.id);
    await f.commands.keys.revoke(record.id, f.account.id);
    expect(await f.store.listWebhookDeliveries(endpointId)).toHaveLength(1);
  });

  it('tells of every revocation: by the owner, by the operator, and of a leaked key', async () => {
    const byOwner = await f.commands.keys.create(f.account.id, 'owner-revoked');
    const byOperator = await f.commands.keys.create(f.account.id, 'operator-revoked');
    const leaked = await f.commands.keys.create(f.account.id, 'leaked');
    await f.commands.keys.revoke(byOwner.record.id, f.account.id);
    await f.commands.keys.revoke(byOperator.record.id, undefined, { kind: 'cli', id: 'test' });
    await f.commands.keys.revokeLeaked(hashApiKey(leaked.secret), 'https://example.test/leak');
    expect(await f.commands.keys.revokeLeaked(hashApiKey(leaked.secret), null)).toBeUndefined();

    const bodies = await sent();
    expect(bodies.map((b) => [b.type, b.data.key_id, b.data.reason])).toEqual([
      ['key.revoked', byOwner.record.id, 'owner'],
      ['key.revoked', byOperator.record.id, 'operator'],
      ['key.revoked', leaked.record.id, 'leaked'],
    ]);
    expect(bodies[2]!.data).toMatchObject({ name: 'leaked', prefix: leaked.record.prefix, last_four: leaked.record.lastFour, account_id: f.account.id });
  });

  it('tells of a payment that succeeded or failed and of a subscription change, once per Stripe event', async () => {
    const config = loadConfig({
      env: { LMGATE_TEST_STRIPE_KEY: 'sk_test_x', LMGATE_TEST_STRIPE_WHSEC: 'whsec_x' },
      overrides: {
        log: { level: 'silent' },
        tiers: { free: { rpm: 10, tpm: 10_000, concurrency: 2, models: ['*'] }, pro: { rpm: 10, tpm: 10_000, concurrency: 2, models: ['*'], subscription: true, price_month: 20, credits_month: 25 } },
        payments: { stripe: { secret_key_env: 'LMGATE_TEST_STRIPE_KEY', webhook_secret_env: 'LMGATE_TEST_STRIPE_WHSEC', currency: 'usd', credits_per_unit: 2, prices: { pro: 'price_pro_monthly' } } },
      },
    });
    const events = new StripeEvents(config, f.commands);
    const metadata = { account_id: f.account.id, purpose: 'auto_recharge' };
    const succeeded = stripeEvent('payment_intent.succeeded', { id: id('pi'), object: 'payment_intent', amount: 1000, amount_received: 1000, currency: 'usd', status: 'succeeded', metadata });
    expect(await events.receive(succeeded as unknown as Stripe.Event)).toBe('applied');
    expect(await events.receive(succeeded as unknown as Stripe.Event)).toBe('duplicate');
    const failed = stripeEvent('payment_intent.payment_failed', { id: id('pi'), object: 'payment_intent', amount: 1000, amount_received: 0, currency: 'usd', status: 'requires_payment_method', metadata, last_payment_error: { message: 'Your card was declined.' } });
    await events.receive(failed as unknown as Stripe.Event);
    await f.store.saveStripeCustomer(f.account.id, 'cus_hooks');
    const periodEnd = Math.floor(Date.now() / 1000) + 30 * 24 * 3600;
    const updated = stripeEvent('customer.subscription.updated', {
      id: 'sub_1',
      object: 'subscription',
      customer: 'cus_hooks',
      status: 'active',
      cancel_at_period_end: true,
      metadata: {},
      items: { object: 'list', has_more: false, data: [{ id: 'si_1', object: 'subscription_item', current_period_end: periodEnd, price: { id: 'price_pro_monthly', object: 'price' } }] },
    });
    await events.receive(updated as unknown as Stripe.Event);

    const bodies = await sent();
    expect(bodies.map((b) => b.type)).toEqual(['payment.succeeded', 'payment.failed', 'subscription.updated']);
    expect(bodies[0]!.data).toMatchObject({ account_id: f.account.id, kind: 'auto_recharge', amount_minor: 1000, currency: 'usd', credits_micros: 20_000_000 });
    expect(bodies[1]!.data).toEqual({ account_id: f.account.id, kind: 'auto_recharge', reference: (failed.data as { object: { id: string } }).object.id, reason: 'Your card was declined.' });
    expect(bodies[2]!.data).toEqual({ account_id: f.account.id, tier: 'pro', status: 'active', period_end: new Date(periodEnd * 1000).toISOString(), cancel_at_period_end: true });
  });
});
