// The Billing page with payments on, in Chromium against the fake Stripe: adding credits
// goes to Checkout and, once the signed webhook is in, the return page shows the new
// balance; subscribing marks the plan current; Manage subscription opens the portal; the
// payments list shows money and credits; auto-recharge shows why a failed charge stopped it.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, id, nowSec, startFakeStripe, stripeEvent, type FakeStripe } from '../helpers/fake-stripe.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { EMPTY_SIGN_UPS, paymentsConfig } from '../payments/payments-fixtures.js';
import { launchBrowser, openPage } from './browser.js';
import { signUp, uniqueEmail } from './dashboard.js';

const DAY = 24 * 60 * 60;

let browser: Browser;
let fake: FakeStripe;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  fake = await startFakeStripe();
  t = await startApp({
    overrides: {
      payments: paymentsConfig(fake), // $10 buys 20 credits; presets $10 and $25
      signup: EMPTY_SIGN_UPS,
      tiers: {
        free: { rpm: 60, tpm: 100_000, concurrency: 4, models: ['demo-*'] },
        pro: { rpm: 600, tpm: 2_000_000, concurrency: 32, models: ['*'], subscription: true, price_month: 20, credits_month: 25 },
      },
    },
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await fake?.close();
});

/** The fake Checkout page the browser is on, and the session behind it. */
async function onCheckout(page: Page): Promise<Record<string, unknown> & { id: string; customer: string; success_url: string; cancel_url: string }> {
  await page.waitForURL(`${fake.url}/checkout/**`);
  await page.getByRole('heading', { name: 'Fake Stripe checkout' }).waitFor();
  const sessionId = new URL(page.url()).pathname.split('/').pop()!;
  return fake.objects.get(sessionId) as never;
}

/** Where Stripe sends the browser back to after paying. */
function successUrl(session: { id: string; success_url: string }): string {
  return session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id);
}

describe('billing with payments', () => {
  it('adding credits goes to Checkout, and the return page waits for the webhook and shows the new balance', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('payer'));
    await page.goto('/billing/plans');
    const addCredits = page.getByRole('region', { name: 'Add credits' });
    await addCredits.getByRole('button', { name: '$10.00', exact: true }).click();
    expect(await addCredits.innerText()).toContain('Adds 20.00 credits.');
    await addCredits.getByRole('button', { name: 'Pay $10.00' }).click();

    const session = await onCheckout(page);
    expect(session).toMatchObject({ mode: 'payment', amount_total: 1000, currency: 'usd' });
    expect(session.success_url).toMatch(new RegExp(`^${t.origin}/billing/plans\\?`));

    // Back from Checkout before the webhook: the page waits and says so.
    await page.goto(successUrl(session));
    await page.getByRole('status').getByText('Waiting for Stripe to confirm your payment').waitFor();
    const paid = { ...session, payment_status: 'paid', status: 'complete', payment_intent: id('pi') };
    expect((await deliver(t.origin, stripeEvent('checkout.session.completed', paid))).status).toBe(200);

    await page.getByRole('status').getByText('$10.00 paid: 20.00 credits were added. Your balance is now 20.00 credits.').waitFor({ timeout: 15_000 });
    await page.getByRole('main').getByTestId('balance').getByText('20.00').waitFor();
    const row = page.getByTestId('payments').getByRole('row', { name: /Top-up/ });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/Top-up\s+Paid\s+\$10\.00\s+20\.00/);
    await screenshot('billing-top-up-returned');

    // Coming back without paying charged nothing.
    await page.goto(session.cancel_url);
    await page.getByRole('status').getByText('Checkout was canceled. Nothing was charged.').waitFor();
    await page.getByTestId('payments').getByRole('row', { name: /Top-up/ }).waitFor();
    expect(await page.getByTestId('payments').getByRole('row').count()).toBe(2);
    assertClean();
  });

  it('subscribing to the paid plan marks it current, and Manage subscription opens the portal', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('subscriber'));
    await page.goto('/billing/plans');
    const plan = (name: string) => page.getByRole('article', { name });
    await plan('Free').getByText('Current plan').waitFor();
    expect(await page.getByRole('button', { name: 'Manage subscription' }).count()).toBe(0);
    await plan('Pro').getByRole('button', { name: 'Subscribe to Pro' }).click();

    const session = await onCheckout(page);
    expect(session).toMatchObject({ mode: 'subscription', line_items_param: [{ price: 'price_pro_monthly', quantity: '1' }] });
    await page.goto(successUrl(session));
    await page.getByRole('status').getByText('Waiting for Stripe to confirm your subscription').waitFor();

    const periodEnd = nowSec() + 30 * DAY;
    const invoice = {
      id: id('in'),
      object: 'invoice',
      customer: session.customer,
      currency: 'usd',
      amount_paid: 2000,
      hosted_invoice_url: `${fake.url}/invoice/1`,
      billing_reason: 'subscription_create',
      status: 'paid',
      created: nowSec(),
      parent: { type: 'subscription_details', subscription_details: { subscription: id('sub'), metadata: {} }, quote_details: null },
      lines: {
        object: 'list',
        has_more: false,
        data: [{ id: id('il'), object: 'line_item', period: { start: periodEnd - 30 * DAY, end: periodEnd }, pricing: { type: 'price_details', price_details: { price: 'price_pro_monthly', product: 'prod_pro' } } }],
      },
    };
    expect((await deliver(t.origin, stripeEvent('invoice.paid', invoice))).status).toBe(200);

    await page.getByRole('status').getByText('You are now subscribed to the Pro plan.').waitFor({ timeout: 15_000 });
    await plan('Pro').getByText('Current plan').waitFor();
    expect(await plan('Free').getByText('Current plan').count()).toBe(0);
    expect(await plan('Free').innerText()).toContain('first cancel your subscription under Manage subscription');
    await page.getByRole('main').getByTestId('balance').getByText('25.00').waitFor();
    const row = page.getByTestId('payments').getByRole('row', { name: /Subscription/ });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/Subscription\s+Paid\s+\$20\.00\s+25\.00\s+Invoice/);
    expect(await row.getByRole('link', { name: 'Invoice' }).getAttribute('href')).toBe(`${fake.url}/invoice/1`);
    await screenshot('billing-subscribed');

    await plan('Pro').getByRole('button', { name: 'Manage subscription' }).click();
    await page.waitForURL(`${fake.url}/portal/bps_*`);
    await page.getByRole('heading', { name: 'Fake Stripe portal' }).waitFor();
    const portal = fake.requests.filter((r) => r.path === '/v1/billing_portal/sessions').at(-1)!;
    expect(portal.params).toMatchObject({ customer: session.customer, return_url: `${t.origin}/billing/plans` });
    assertClean();
  });

  it('auto-recharge is saved, and a failed charge that turned it off shows its notice', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    const email = uniqueEmail('recharger');
    await signUp(page, email);
    await page.goto('/billing/plans');
    const settings = page.getByRole('region', { name: 'Auto-recharge' });
    await settings.getByLabel('Recharge automatically').check();
    await settings.getByLabel('When my balance falls below (credits)').fill('5');
    await settings.getByLabel('Add (USD)').fill('25');
    await settings.getByRole('button', { name: 'Save' }).click();
    await settings.getByRole('status').getByText('Auto-recharge is on.').waitFor();
    const accountId = (await t.store.findAccount(email))!.id;
    expect(await t.store.findAutoRecharge(accountId)).toMatchObject({ enabled: true, thresholdMicros: 5_000_000, amountMinor: 2500, notice: null });

    await t.store.disableAutoRecharge(accountId, 'Auto-recharge was turned off: your card was declined.');
    await page.reload();
    await settings.getByRole('status').getByText('Auto-recharge was turned off: your card was declined.').waitFor();
    expect(await settings.getByLabel('Recharge automatically').isChecked()).toBe(false);
    expect(await settings.getByLabel('Add (USD)').inputValue()).toBe('25');
    await screenshot('billing-auto-recharge-off');
    assertClean();
  });

  it('a payment Stripe has not confirmed within a minute is said to be still processing, and nothing is claimed', async () => {
    const { page, assertClean } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('waiter'));
    // The page's own clock: a minute passes without waiting a minute.
    await page.clock.install();
    await page.goto(`/billing/plans?flow=top-up&checkout=success&session_id=${id('cs')}`);
    await page.getByRole('status').getByText('Waiting for Stripe to confirm your payment').waitFor();
    await page.clock.fastForward(61_000);
    await page.getByRole('status').getByText('Your payment is still being processed.').waitFor({ timeout: 15_000 });
    expect(await page.getByText('credits were added').count()).toBe(0);
    assertClean();
  });
});
