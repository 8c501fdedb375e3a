// Stripe payments end to end: the official client against a fake Stripe API on loopback,
// webhooks signed as Stripe signs them and posted over HTTP to the running app.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { MICROS_PER_CREDIT } from '../../src/money.js';
import { DashboardClient } from '../dashboard/dashboard-client.js';
import Stripe from 'stripe';
import { deliver, FAKE_SECRET_KEY, FAKE_WEBHOOK_SECRET, id, nowSec, startFakeStripe, stripeEvent, type FakeStripe } from '../helpers/fake-stripe.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { EMPTY_SIGN_UPS, expectBooksBalance, paymentsConfig, unappliableBodies } from './payments-fixtures.js';

const DAY = 24 * 60 * 60;
const credits = (n: number) => n * MICROS_PER_CREDIT;

function invoice(customer: string, options: { id?: string; subscription?: string; periodEnd: number; amountPaid?: number; price?: string }) {
  return {
    id: options.id ?? id('in'),
    object: 'invoice',
    customer,
    currency: 'usd',
    amount_paid: options.amountPaid ?? 2000,
    hosted_invoice_url: 'https://invoice.stripe.test/i/1',
    billing_reason: 'subscription_cycle',
    status: 'paid',
    created: nowSec(),
    parent: { type: 'subscription_details', subscription_details: { subscription: options.subscription ?? 'sub_test_1', metadata: {} }, quote_details: null },
    lines: {
      object: 'list',
      has_more: false,
      data: [{ id: id('il'), object: 'line_item', period: { start: options.periodEnd - 30 * DAY, end: options.periodEnd }, pricing: { type: 'price_details', price_details: { price: options.price ?? 'price_pro_monthly', product: 'prod_pro' } } }],
    },
  };
}

function subscription(customer: string, options: { status?: string; cancelAtPeriodEnd?: boolean; periodEnd: number; price?: string }) {
  return {
    id: 'sub_test_1',
    object: 'subscription',
    customer,
    status: options.status ?? 'active',
    cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
    metadata: {},
    items: { object: 'list', has_more: false, data: [{ id: 'si_1', object: 'subscription_item', current_period_end: options.periodEnd, current_period_start: options.periodEnd - 30 * DAY, price: { id: options.price ?? 'price_pro_monthly', object: 'price' } }] },
  };
}

describe.each(['sqlite', 'postgres'] as const)('Stripe payments on %s', (database) => {
  let fake: FakeStripe;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = await startApp({ database, overrides: { payments: paymentsConfig(fake), signup: EMPTY_SIGN_UPS } });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  /** A signed-up customer with a Checkout Session for a top-up of `amountMinor`. */
  async function startTopUp(amountMinor: number) {
    const browser = new DashboardClient(t);
    await browser.signUp();
    const accountId = browser.account.id as string;
    const res = await browser.post('/payments/top-up', { amountMinor });
    expect(res.status, res.text).toBe(200);
    const sessionId = String(res.body.url).split('/').pop()!;
    const session = { ...fake.objects.get(sessionId)!, payment_status: 'paid', status: 'complete', payment_intent: id('pi') } as unknown as Record<string, unknown> & { id: string; customer: string; payment_intent: string };
    return { browser, accountId, session, paid: stripeEvent('checkout.session.completed', session) };
  }

  it('an organisation’s billing member tops up its wallet: one customer, named after it, at the member’s address; a member may not', async () => {
    const owner = new DashboardClient(t);
    await owner.signUp();
    const orgId = (await owner.post('/orgs', { name: `Acme ${database} ${Math.random()}` })).body.org.id as string;
    const billing = new DashboardClient(t);
    await billing.signUp();
    const member = new DashboardClient(t);
    await member.signUp();
    for (const [person, role] of [[billing, 'billing'], [member, 'member']] as const) {
      expect((await owner.post('/orgs/current/members', { email: person.account.email, role })).status).toBe(200);
      expect((await person.post('/orgs/switch', { orgId })).status).toBe(204);
    }
    expect((await member.post('/payments/top-up', { amountMinor: 1000 })).status).toBe(403);
    const res = await billing.post('/payments/top-up', { amountMinor: 1000 });
    expect(res.status, res.text).toBe(200);
    const created = fake.requests.filter((r) => r.path === '/v1/customers' && (r.params.metadata as Record<string, string>).account_id === orgId);
    expect(created).toHaveLength(1);
    expect(created[0]!.params).toMatchObject({ email: billing.account.email, name: expect.stringMatching(/^Acme /) });
    const sessionId = String(res.body.url).split('/').pop()!;
    const session = { ...fake.objects.get(sessionId)!, payment_status: 'paid', status: 'complete', payment_intent: id('pi') } as unknown as Record<string, unknown> & { id: string };
    expect((await deliver(t.origin, stripeEvent('checkout.session.completed', session))).status).toBe(200);
    expect(await t.store.balanceOf(orgId)).toBe(credits(20));
    expect(await t.store.balanceOf(billing.account.id as string)).toBe(0);
  });

  it('a top-up credits exactly the configured credits, once, with a ledger row naming the session', async () => {
    const { browser, accountId, session, paid } = await startTopUp(1000);
    expect(session).toMatchObject({ mode: 'payment', amount_total: 1000, currency: 'usd', client_reference_id: accountId, metadata: { purpose: 'top_up' } });
    expect(await t.store.balanceOf(accountId)).toBe(0);

    expect((await deliver(t.origin, paid)).status).toBe(200);
    expect((await deliver(t.origin, paid)).body).toMatchObject({ received: true, duplicate: true });
    expect(await t.store.balanceOf(accountId)).toBe(credits(20));
    const [entry] = await t.store.listLedger(accountId);
    expect(entry).toMatchObject({ kind: 'top_up', amountMicros: credits(20), reference: session.id });
    expect(entry!.reason).toContain(String(session.payment_intent));

    const list = await browser.get('/payments');
    expect(list.body.payments).toEqual([expect.objectContaining({ kind: 'top_up', status: 'paid', amountMinor: 1000, creditsMicros: credits(20), checkoutSessionId: session.id })]);
    expect((await browser.get('/payments/options')).body).toMatchObject({ enabled: true, currency: 'usd', minorPerUnit: 100, creditsMicrosPerUnit: credits(2), presetsMinor: [1000, 2500] });
    // Checkout comes back to the Billing page, which waits there for this webhook.
    expect(new URL(String(session.success_url)).pathname).toBe('/billing/plans');
    await expectBooksBalance(t.store, [accountId]);

    // The operator's CLI lists it, and replaying the stored event credits nothing more.
    const configPath = join(t.dataDir, 'cli.json');
    writeFileSync(configPath, JSON.stringify({ payments: paymentsConfig(fake), store: { data_dir: t.dataDir, ...(t.config.store.database_url ? { database_url: t.config.store.database_url } : {}) } }));
    const out: string[] = [];
    const run = (...argv: string[]) => main([...argv, '--json'], { out: (line) => out.push(line), err: (line) => out.push(line) }, { LMGATE_CONFIG: configPath });
    expect(await run('payments', 'list')).toBe(0);
    expect(JSON.parse(out.pop()!)).toContainEqual(expect.objectContaining({ account_id: accountId, status: 'paid', amount_minor: 1000, stripe_object: session.id }));
    expect(await run('payments', 'replay', String(paid.id))).toBe(0);
    expect(JSON.parse(out.pop()!)).toMatchObject({ replayed: paid.id, type: 'checkout.session.completed', account_id: accountId });
    expect(await t.store.balanceOf(accountId)).toBe(credits(20));
    expect(await run('payments', 'replay', 'evt_unknown')).toBe(1);
  });

  it('refuses a top-up outside the configured bounds', async () => {
    const browser = new DashboardClient(t);
    await browser.signUp();
    expect((await browser.post('/payments/top-up', { amountMinor: 499 })).status).toBe(422);
    expect((await browser.post('/payments/top-up', { amountMinor: 10_001 })).status).toBe(422);
  });

  it('forged, tampered, expired, unsigned and replayed deliveries get 400 and credit nothing', async () => {
    const { accountId, paid } = await startTopUp(1000);
    const tampered = JSON.stringify({ ...paid, data: { object: { ...(paid.data as { object: object }).object, amount_total: 100_000 } } });
    const attempts = [
      await deliver(t.origin, paid, { secret: 'whsec_forged' }),
      await deliver(t.origin, paid, { body: tampered }),
      await deliver(t.origin, paid, { timestamp: nowSec() - 301 }),
      await deliver(t.origin, paid, { signature: null }),
      // A delivery captured ten minutes ago and sent again: past Stripe's tolerance.
      await deliver(t.origin, { ...paid, id: id('evt') }, { timestamp: nowSec() - 600 }),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(400);
      expect(attempt.body).toMatchObject({ error: { message: 'The webhook signature is not valid.' } });
    }
    expect(await t.store.balanceOf(accountId)).toBe(0);
    expect(await t.store.findStripeEvent(String(paid.id))).toBeUndefined();
  });

  it('signed bodies that are not events lmgate can apply get 400 in the unified body, and record and credit nothing', async () => {
    const { accountId, session, paid } = await startTopUp(1000);
    const bodies = unappliableBodies(paid, session);
    for (const body of bodies) {
      const answer = await deliver(t.origin, body as Record<string, unknown>);
      expect(answer.status, JSON.stringify(body)?.slice(0, 80)).toBe(400);
      expect(answer.body).toMatchObject({ error: { message: 'The webhook body is not a Stripe event lmgate can apply.', code: 400 } });
    }
    // Signed bytes that are not JSON at all.
    const text = 'not json {';
    const signature = new Stripe(FAKE_SECRET_KEY).webhooks.generateTestHeaderString({ payload: text, secret: FAKE_WEBHOOK_SECRET });
    expect((await deliver(t.origin, {}, { body: text, signature })).status).toBe(400);
    expect(await t.store.balanceOf(accountId)).toBe(0);
    for (const body of bodies) {
      const eventId = (body as { id?: unknown } | null)?.id;
      if (typeof eventId === 'string') expect(await t.store.findStripeEvent(eventId)).toBeUndefined();
    }
    // The well-formed event still applies.
    expect((await deliver(t.origin, paid)).status).toBe(200);
    expect(await t.store.balanceOf(accountId)).toBe(credits(20));
  });

  it('a subscription renewal grants the monthly credits once per invoice, and events out of order keep the newest state', async () => {
    const browser = new DashboardClient(t);
    await browser.signUp();
    const accountId = browser.account.id as string;
    const res = await browser.post('/payments/subscribe', { tier: 'pro' });
    expect(res.status, res.text).toBe(200);
    const customer = (await t.store.findStripeCustomer(accountId))!.customerId;
    const now = nowSec();
    const first = invoice(customer, { periodEnd: now + 30 * DAY });
    const second = invoice(customer, { periodEnd: now + 60 * DAY });

    // The second period's invoice arrives before the first's.
    expect((await deliver(t.origin, stripeEvent('invoice.paid', second, { created: now + 20 }))).status).toBe(200);
    expect((await deliver(t.origin, stripeEvent('invoice.paid', first, { created: now + 10 }))).status).toBe(200);
    // Stripe may send the same invoice again under another event id.
    expect((await deliver(t.origin, stripeEvent('invoice.paid', first, { created: now + 10 }))).status).toBe(200);

    const account = (await t.store.findAccount(accountId))!;
    expect(account).toMatchObject({ tier: 'pro', subscriptionStatus: 'active', subscriptionPeriodEnd: new Date((now + 60 * DAY) * 1000).toISOString() });
    const grants = (await t.store.listLedger(accountId)).filter((e) => e.kind === 'subscription_credit');
    expect(grants.map((e) => e.reference).sort()).toEqual([first.id, second.id].sort());
    expect(await t.store.balanceOf(accountId)).toBe(credits(50));

    // A newer subscription.updated (cancel at period end) then an older one (not canceling).
    await deliver(t.origin, stripeEvent('customer.subscription.updated', subscription(customer, { cancelAtPeriodEnd: true, periodEnd: now + 60 * DAY }), { created: now + 40 }));
    await deliver(t.origin, stripeEvent('customer.subscription.updated', subscription(customer, { cancelAtPeriodEnd: false, periodEnd: now + 60 * DAY }), { created: now + 30 }));
    expect(await t.store.findAccount(accountId)).toMatchObject({ tier: 'pro', cancelAtPeriodEnd: true });
    await expectBooksBalance(t.store, [accountId]);
  });

  it('past_due keeps the tier through the grace period, then 403 subscription_inactive, then active once paid', async () => {
    const { apiKey: keyInGrace, account: inGrace } = await t.createAccount({ tier: 'free', credits: 10 });
    const { apiKey, account } = await t.createAccount({ tier: 'free', credits: 10 });
    const now = nowSec();
    for (const [who, failedAt] of [[inGrace.id, now - 3600], [account.id, now - 4 * DAY]] as const) {
      const customer = id('cus');
      await t.store.saveStripeCustomer(who, customer);
      await deliver(t.origin, stripeEvent('invoice.paid', invoice(customer, { periodEnd: now + 25 * DAY }), { created: now - 5 * DAY }));
      await deliver(t.origin, stripeEvent('invoice.payment_failed', invoice(customer, { periodEnd: now + 25 * DAY }), { created: failedAt }));
    }
    const chat = (key: string) => t.client(key).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] });

    expect(await t.store.findAccount(inGrace.id)).toMatchObject({ tier: 'pro', subscriptionStatus: 'past_due' });
    expect((await chat(keyInGrace)).choices[0]!.message.content).toBe('hi');

    expect(await t.store.findAccount(account.id)).toMatchObject({ tier: 'pro', subscriptionStatus: 'past_due' });
    await expect(chat(apiKey)).rejects.toMatchObject({ status: 403, error: { reason: 'subscription_inactive' } });
    const status = await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(((await status.json()) as { subscription: unknown }).subscription).toMatchObject({ status: 'past_due', cancel_at_period_end: false });

    const customer = (await t.store.findStripeCustomer(account.id))!.customerId;
    await deliver(t.origin, stripeEvent('invoice.paid', invoice(customer, { periodEnd: now + 30 * DAY })));
    expect(await t.store.findAccount(account.id)).toMatchObject({ subscriptionStatus: 'active', subscriptionGraceUntil: null });
    expect((await chat(apiKey)).choices[0]!.message.content).toBe('hi');
    await expectBooksBalance(t.store, [inGrace.id, account.id]);
  });

  it('a subscription canceled at period end keeps the tier until it ends, then falls back to the default tier', async () => {
    const { apiKey, account } = await t.createAccount({ tier: 'free', credits: 0 });
    const customer = id('cus');
    await t.store.saveStripeCustomer(account.id, customer);
    const now = nowSec();
    await deliver(t.origin, stripeEvent('invoice.paid', invoice(customer, { periodEnd: now + 30 * DAY }), { created: now - 10 }));
    await deliver(t.origin, stripeEvent('customer.subscription.updated', subscription(customer, { cancelAtPeriodEnd: true, periodEnd: now + 30 * DAY }), { created: now - 5 }));
    const before = await (await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } })).json();
    expect(before).toMatchObject({ tier: { name: 'pro' }, subscription: { status: 'active', cancel_at_period_end: true } });

    await deliver(t.origin, stripeEvent('customer.subscription.deleted', subscription(customer, { status: 'canceled', periodEnd: now + 30 * DAY })));
    const after = await (await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } })).json();
    expect(after).toMatchObject({ tier: { name: 'free' }, subscription: { status: 'not_required', cancel_at_period_end: false } });
    expect(await t.store.findAccount(account.id)).toMatchObject({ tier: 'free', subscriptionStatus: 'canceled' });
  });

  it('a refund takes back its share of the credits once; a dispute takes what is left and suspends the account', async () => {
    const { accountId, session, paid } = await startTopUp(1000);
    await deliver(t.origin, paid);
    const charge = { id: id('ch'), object: 'charge', payment_intent: session.payment_intent, amount: 1000, amount_refunded: 500, refunded: false, customer: session.customer, receipt_url: null };
    const partial = stripeEvent('charge.refunded', charge);
    await deliver(t.origin, partial);
    await deliver(t.origin, partial);
    expect(await t.store.balanceOf(accountId)).toBe(credits(10));
    const [refund] = await t.store.listLedger(accountId);
    expect(refund).toMatchObject({ kind: 'refund', amountMicros: -credits(10), reference: charge.id });

    // Some credits spent, then the customer disputes the whole charge.
    await t.app.commands.credits.adjust({ accountId, amountMicros: -credits(7), reason: 'spent' });
    const dispute = { id: id('dp'), object: 'dispute', charge: charge.id, payment_intent: session.payment_intent, amount: 1000, status: 'needs_response', created: nowSec() };
    expect((await deliver(t.origin, stripeEvent('charge.dispute.created', dispute))).status).toBe(200);
    expect(await t.store.balanceOf(accountId)).toBe(0);
    expect((await t.store.listLedger(accountId))[0]).toMatchObject({ kind: 'adjustment', amountMicros: -credits(3), reference: dispute.id });
    expect(await t.store.findAccount(accountId)).toMatchObject({ status: 'suspended' });
    expect((await t.store.findPayment({ checkoutSessionId: String(session.id) }))!.status).toBe('disputed');
    await expectBooksBalance(t.store, [accountId]);
  });

  it('two partial refunds of one charge delivered at once take back their cumulative share, once', async () => {
    const { accountId, session, paid } = await startTopUp(1000);
    await deliver(t.origin, paid);
    const charge = { id: id('ch'), object: 'charge', payment_intent: session.payment_intent, amount: 1000, refunded: false, customer: session.customer, receipt_url: null };
    // Stripe's amount_refunded is cumulative: 300, then 500 in all. Each event applies only
    // what it adds to what was applied before it, whichever is applied first.
    const first = stripeEvent('charge.refunded', { ...charge, amount_refunded: 300 });
    const second = stripeEvent('charge.refunded', { ...charge, amount_refunded: 500 });
    const answers = await Promise.all([first, second, first, second].map((event) => deliver(t.origin, event)));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    expect(await t.store.balanceOf(accountId)).toBe(credits(10));
    const refunds = (await t.store.listLedger(accountId)).filter((entry) => entry.kind === 'refund');
    expect(refunds.reduce((sum, entry) => sum + entry.amountMicros, 0)).toBe(-credits(10));
    expect((await t.store.findPayment({ checkoutSessionId: String(session.id) }))!.refundedMinor).toBe(500);
    await expectBooksBalance(t.store, [accountId]);
  });

  it('links each card payment to its Stripe receipt, whichever of the charge and the payment Stripe reports first', async () => {
    // The charge first: its receipt has no payment to go to yet.
    const early = await startTopUp(1000);
    const earlyCharge = { id: id('ch'), object: 'charge', payment_intent: early.session.payment_intent, customer: early.session.customer, receipt_url: 'https://pay.stripe.test/receipts/early' };
    expect((await deliver(t.origin, stripeEvent('charge.succeeded', earlyCharge))).status).toBe(200);
    expect((await deliver(t.origin, early.paid)).status).toBe(200);
    const [earlyPayment] = (await early.browser.get('/payments')).body.payments;
    expect(earlyPayment.receiptUrl).toBe(`/api/dashboard/payments/${earlyPayment.id}/receipt`);
    const asked = fake.requests.length;
    const opened = await early.browser.get(`/payments/${earlyPayment.id}/receipt`, { redirect: 'manual' });
    expect(opened.status).toBe(302);
    expect(opened.headers.get('location')).toBe(`${fake.url}/receipts/${early.session.payment_intent}`);
    expect(fake.requests.slice(asked)).toEqual([expect.objectContaining({ method: 'GET', path: `/v1/payment_intents/${early.session.payment_intent}` })]);
    // Kept: the list links Stripe's receipt directly from now on.
    expect((await early.browser.get('/payments')).body.payments[0].receiptUrl).toBe(`${fake.url}/receipts/${early.session.payment_intent}`);

    // The payment first: the charge's receipt is recorded with it.
    const late = await startTopUp(1000);
    expect((await deliver(t.origin, late.paid)).status).toBe(200);
    const lateCharge = { ...earlyCharge, id: id('ch'), payment_intent: late.session.payment_intent, customer: late.session.customer, receipt_url: 'https://pay.stripe.test/receipts/late' };
    expect((await deliver(t.origin, stripeEvent('charge.succeeded', lateCharge))).status).toBe(200);
    expect((await late.browser.get('/payments')).body.payments[0].receiptUrl).toBe('https://pay.stripe.test/receipts/late');

    // Another account's payment is not found.
    expect((await late.browser.get(`/payments/${earlyPayment.id}/receipt`, { redirect: 'manual' })).status).toBe(404);
  });

  it('opens the Billing Portal for the customer and answers its URL', async () => {
    const browser = new DashboardClient(t);
    await browser.signUp();
    const res = await browser.post('/payments/portal');
    expect(res.status, res.text).toBe(200);
    expect(res.body.url).toMatch(new RegExp(`^${fake.url}/portal/bps_`));
    const portal = fake.requests.filter((r) => r.path === '/v1/billing_portal/sessions').at(-1)!;
    expect(portal.params.customer).toBe((await t.store.findStripeCustomer(browser.account.id as string))!.customerId);
  });
});

describe('a plan change by a price switch', () => {
  let fake: FakeStripe;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeStripe();
    const stripe = paymentsConfig(fake).stripe as Record<string, unknown>;
    t = await startApp({
      overrides: {
        payments: { stripe: { ...stripe, prices: { pro: 'price_pro_monthly', team: 'price_team_monthly' } } },
        signup: EMPTY_SIGN_UPS,
        tiers: {
          free: { rpm: 60, tpm: 100_000, concurrency: 4, models: ['demo-*'] },
          pro: { rpm: 600, tpm: 2_000_000, concurrency: 32, models: ['*'], subscription: true, price_month: 20, credits_month: 25 },
          team: { rpm: 1200, tpm: 4_000_000, concurrency: 64, models: ['*'], subscription: true, price_month: 80, credits_month: 100 },
        },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('moves the account to the new tier, grants the new plan’s credits with its first invoice, and ignores an older update that arrives late', async () => {
    const { account } = await t.createAccount({ tier: 'free', credits: 0 });
    const customer = id('cus');
    await t.store.saveStripeCustomer(account.id, customer);
    const now = nowSec();
    await deliver(t.origin, stripeEvent('invoice.paid', invoice(customer, { periodEnd: now + 30 * DAY }), { created: now - 100 }));
    expect(await t.store.findAccount(account.id)).toMatchObject({ tier: 'pro', subscriptionStatus: 'active' });

    const upgraded = stripeEvent('customer.subscription.updated', subscription(customer, { periodEnd: now + 30 * DAY, price: 'price_team_monthly' }), { created: now - 50 });
    await deliver(t.origin, upgraded);
    expect(await t.store.findAccount(account.id)).toMatchObject({ tier: 'team', subscriptionStatus: 'active' });
    await deliver(t.origin, stripeEvent('invoice.paid', invoice(customer, { periodEnd: now + 30 * DAY, price: 'price_team_monthly', amountPaid: 8000 }), { created: now - 40 }));

    // The pro plan's update from before the switch, delivered only now.
    await deliver(t.origin, stripeEvent('customer.subscription.updated', subscription(customer, { periodEnd: now + 30 * DAY }), { created: now - 200 }));
    expect(await t.store.findAccount(account.id)).toMatchObject({ tier: 'team', subscriptionStatus: 'active' });
    const ledger = await t.store.listLedger(account.id);
    expect(ledger.map((entry) => [entry.kind, entry.amountMicros])).toEqual([
      ['subscription_credit', credits(100)],
      ['subscription_credit', credits(25)],
    ]);
    expect(await t.store.balanceOf(account.id)).toBe(credits(125));
    await expectBooksBalance(t.store, [account.id]);
  });
});
