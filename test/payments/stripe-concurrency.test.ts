// Many deliveries at once: one event sent 20 times concurrently to two instances credits
// once, and signed bodies that are not events get 400 from either; many requests crossing an auto-recharge threshold charge the card once, on one
// instance or spread over two.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MICROS_PER_CREDIT } from '../../src/money.js';
import { DashboardClient } from '../dashboard/dashboard-client.js';
import { deliver, id, startFakeStripe, stripeEvent, type FakeStripe } from '../helpers/fake-stripe.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';
import { EMPTY_SIGN_UPS, expectBooksBalance, paymentsConfig, unappliableBodies } from './payments-fixtures.js';

describe('one event delivered 20 times at once across two instances', () => {
  let fake: FakeStripe;
  let cluster: TestCluster;

  beforeAll(async () => {
    fake = await startFakeStripe();
    cluster = await startCluster(2, { payments: paymentsConfig(fake) });
  });
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  it('credits once', async () => {
    const { account } = await cluster.createAccount({ micros: 0 });
    const session = { id: id('cs'), object: 'checkout.session', mode: 'payment', payment_status: 'paid', status: 'complete', amount_total: 2500, currency: 'usd', client_reference_id: account.id, customer: id('cus'), payment_intent: id('pi'), metadata: { account_id: account.id, purpose: 'top_up' } };
    const event = stripeEvent('checkout.session.completed', session);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => deliver(cluster.instances[i % 2]!.origin, event)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    expect(await cluster.store.balanceOf(account.id)).toBe(50 * MICROS_PER_CREDIT);
    expect((await cluster.store.listLedger(account.id)).filter((e) => e.kind === 'top_up')).toHaveLength(1);
    await expectBooksBalance(cluster.store, [account.id]);
  });

  it('answers signed bodies that are not events lmgate can apply with 400 on either instance, and credits nothing', async () => {
    const { account } = await cluster.createAccount({ micros: 0 });
    const session = { id: id('cs'), object: 'checkout.session', mode: 'payment', payment_status: 'paid', status: 'complete', amount_total: 2500, currency: 'usd', client_reference_id: account.id, customer: id('cus'), payment_intent: id('pi'), metadata: { account_id: account.id, purpose: 'top_up' } };
    const paid = stripeEvent('checkout.session.completed', session);
    const bodies = unappliableBodies(paid, session);
    for (const [i, body] of bodies.entries()) {
      const answer = await deliver(cluster.instances[i % 2]!.origin, body as Record<string, unknown>);
      expect(answer.status, JSON.stringify(body)?.slice(0, 80)).toBe(400);
      expect(answer.body).toMatchObject({ error: { message: 'The webhook body is not a Stripe event lmgate can apply.', code: 400 } });
    }
    expect(await cluster.store.balanceOf(account.id)).toBe(0);
    expect((await deliver(cluster.instances[1]!.origin, paid)).status).toBe(200);
    expect(await cluster.store.balanceOf(account.id)).toBe(50 * MICROS_PER_CREDIT);
  });
});

/** 0.2 credits per prompt token: every request costs a few credits. */
const pricedEcho = (fake: FakeStripe) => ({
  payments: paymentsConfig(fake),
  signup: EMPTY_SIGN_UPS,
  models: { 'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 200_000, output: 0 } } },
  tiers: { free: { rpm: 1000, tpm: 1_000_000, concurrency: 64, models: ['*'] }, pro: { rpm: 1000, tpm: 1_000_000, concurrency: 64, models: ['*'], subscription: true, credits_month: 25 } },
});
const SPEND = { model: 'demo-echo', messages: [{ role: 'user' as const, content: 'spend some credits here please' }] };

describe('auto-recharge across two instances', () => {
  let fake: FakeStripe;
  let cluster: TestCluster;

  beforeAll(async () => {
    fake = await startFakeStripe();
    cluster = await startCluster(2, pricedEcho(fake));
  });
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
  });

  it('charges the card once when requests on both instances cross the threshold together', async () => {
    const { account, apiKey } = await cluster.createAccount({ micros: 100 * MICROS_PER_CREDIT });
    await cluster.store.saveStripeCustomer(account.id, id('cus'));
    await cluster.store.setAutoRecharge(account.id, { enabled: true, thresholdMicros: 80 * MICROS_PER_CREDIT, amountMinor: 1000 });
    const clients = cluster.instances.map((instance) => instance.client(apiKey));
    await Promise.all(Array.from({ length: 20 }, (_, i) => clients[i % 2]!.chat.completions.create(SPEND)));
    await fake.waitFor('/v1/payment_intents', 1);
    for (const instance of cluster.instances) await instance.app.payments!.autoRecharge.idle();
    // Both instances saw the crossing; the store's claim let one of them charge.
    const intents = fake.requests.filter((r) => r.path === '/v1/payment_intents');
    expect(intents).toHaveLength(1);
    expect(intents[0]!.params).toMatchObject({ amount: '1000', off_session: 'true', metadata: { account_id: account.id, purpose: 'auto_recharge' } });
    await cluster.flushUsage();
    expect(await cluster.store.balanceOf(account.id)).toBeLessThan(80 * MICROS_PER_CREDIT);
    await expectBooksBalance(cluster.store, [account.id]);
  });
});

describe('auto-recharge', () => {
  let fake: FakeStripe;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = await startApp({ overrides: pricedEcho(fake) });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  async function customerWithAutoRecharge() {
    const browser = new DashboardClient(t);
    await browser.signUp();
    const accountId = browser.account.id as string;
    expect((await browser.post('/payments/portal')).status).toBe(200); // creates the Stripe customer
    await t.app.commands.credits.grant({ accountId, amountMicros: 100 * MICROS_PER_CREDIT, reason: 'test' });
    const set = await browser.request('PUT', '/payments/auto-recharge', { body: { enabled: true, thresholdMicros: 80 * MICROS_PER_CREDIT, amountMinor: 1000 } });
    expect(set.status, set.text).toBe(200);
    const { secret } = await t.app.commands.keys.create(accountId, 'test');
    return { browser, accountId, client: t.client(secret) };
  }

  it('charges the saved card once when many concurrent requests cross the threshold, and credits by webhook', async () => {
    const { browser, accountId, client } = await customerWithAutoRecharge();
    const before = fake.requests.filter((r) => r.path === '/v1/payment_intents').length;
    await Promise.all(
      Array.from({ length: 20 }, () => client.chat.completions.create(SPEND)),
    );
    await fake.waitFor('/v1/payment_intents', before + 1);
    await t.app.payments!.autoRecharge.idle();
    const intents = fake.requests.filter((r) => r.path === '/v1/payment_intents').slice(before);
    expect(intents).toHaveLength(1);
    expect(intents[0]!.params).toMatchObject({ amount: '1000', currency: 'usd', off_session: 'true', confirm: 'true', metadata: { account_id: accountId, purpose: 'auto_recharge' } });
    await t.flushUsage();
    const spent = await t.store.balanceOf(accountId);
    expect(spent).toBeLessThan(80 * MICROS_PER_CREDIT);

    const intent = [...fake.objects.values()].find((o) => o.object === 'payment_intent' && (o.metadata as Record<string, string>).account_id === accountId)!;
    await deliver(t.origin, stripeEvent('payment_intent.succeeded', intent));
    await deliver(t.origin, stripeEvent('payment_intent.succeeded', intent));
    expect(await t.store.balanceOf(accountId)).toBe(spent + 20 * MICROS_PER_CREDIT);
    expect((await browser.get('/payments')).body.payments).toEqual([expect.objectContaining({ kind: 'auto_recharge', status: 'paid', amountMinor: 1000 })]);
    await expectBooksBalance(t.store, [accountId]);
  });

  it('a failed off-session payment reported by webhook turns auto-recharge off with a notice, once', async () => {
    const { browser, accountId } = await customerWithAutoRecharge();
    const intent = { id: id('pi'), object: 'payment_intent', amount: 1000, amount_received: 0, currency: 'usd', status: 'requires_payment_method', metadata: { account_id: accountId, purpose: 'auto_recharge' } };
    const failed = stripeEvent('payment_intent.payment_failed', intent);
    expect((await deliver(t.origin, failed)).status).toBe(200);
    expect((await deliver(t.origin, failed)).body).toMatchObject({ duplicate: true });
    const settings = (await browser.get('/payments/auto-recharge')).body;
    expect(settings).toMatchObject({ enabled: false });
    expect(settings.notice).toContain('failed');
    expect(await t.store.balanceOf(accountId)).toBe(100 * MICROS_PER_CREDIT);
    await expectBooksBalance(t.store, [accountId]);
  });

  it('a declined card turns auto-recharge off with a notice', async () => {
    const { browser, client } = await customerWithAutoRecharge();
    fake.declineCards = true;
    try {
      const before = fake.requests.filter((r) => r.path === '/v1/payment_intents').length;
      await Promise.all(Array.from({ length: 20 }, () => client.chat.completions.create(SPEND)));
      await fake.waitFor('/v1/payment_intents', before + 1);
      await t.app.payments!.autoRecharge.idle();
      const settings = (await browser.get('/payments/auto-recharge')).body;
      expect(settings).toMatchObject({ enabled: false });
      expect(settings.notice).toContain('declined');
    } finally {
      fake.declineCards = false;
    }
  });
});
