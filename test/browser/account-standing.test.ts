// A blocked customer sees why (issue 31, wall 2): a suspended account, a tier that needs a
// subscription the account lacks, a lapsed one and a past-due one each say so on Overview
// and Billing, with what to do and the operator's support contact; a complimentary plan
// says until when. The API refuses by the same rule (billing/tiers.ts standingOf).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage, PHONE } from './browser.js';
import { bodyText, signUp, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp({ overrides: { support: { email: 'help@example.test', url: 'https://help.example.test/' } } });
});
afterAll(async () => {
  await browser.close();
  await t.close();
});

async function accountOf(email: string): Promise<string> {
  const account = await t.store.findAccount(email);
  expect(account).toBeDefined();
  return account!.id;
}

describe('a blocked customer sees why', () => {
  it('pro without a subscription: Overview and Billing say API calls are refused and how to fix it', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    const email = uniqueEmail('unsubscribed');
    await signUp(page, email);
    expect(await page.getByRole('alert').count()).toBe(0);
    await t.store.setAccountTier(await accountOf(email), 'pro');
    await t.syncChanges();

    await page.reload();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('The Pro plan needs a subscription, and this account has none');
    expect(await alert.innerText()).toContain('every API request is refused (HTTP 403, subscription_inactive)');
    expect(await alert.getByRole('link', { name: 'help@example.test' }).getAttribute('href')).toBe('mailto:help@example.test');
    expect(await page.getByTestId('plan-blocked').innerText()).toContain('API requests are refused');
    await screenshot('standing-subscription-required');

    await page.getByRole('link', { name: 'choose a plan without a subscription' }).click();
    await page.getByRole('heading', { level: 1, name: 'Billing' }).waitFor();
    expect(await page.getByRole('alert').innerText()).toContain('needs a subscription');
    const pro = page.getByRole('article').filter({ has: page.getByRole('heading', { name: 'Pro' }) });
    expect(await pro.innerText()).toContain('Your plan, but API requests are refused');
    expect(await pro.innerText()).not.toContain('This is your plan');
    await assertClean();
  });

  it('a suspended account is told so, with the contact, at phone size too', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin, PHONE);
    const email = uniqueEmail('suspended');
    await signUp(page, email);
    await t.store.setAccountStatus(await accountOf(email), 'suspended');
    await t.syncChanges();
    await page.reload();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('Your account is suspended');
    expect(await alert.getByRole('link', { name: 'https://help.example.test/' }).count()).toBe(1);
    await screenshot('standing-suspended');
    await assertClean();
  });

  it('a lapsed subscription, a past-due one with its grace end, and a complimentary plan with its end', async () => {
    const { page, assertClean } = await openPage(browser, t.origin);
    const email = uniqueEmail('lapsed');
    await signUp(page, email);
    const id = await accountOf(email);
    await t.store.saveStripeCustomer(id, `cus_${id}`);
    const state = { tier: 'pro', periodEnd: null, cancelAtPeriodEnd: false, subscriptionId: 'sub_test' };
    await t.store.applySubscriptionState(id, { ...state, status: 'canceled', graceUntil: null }, Math.floor(Date.now() / 1000));
    await t.syncChanges();
    await page.reload();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toContain('Your Pro subscription has ended');

    await t.store.applySubscriptionState(id, { ...state, status: 'past_due', graceUntil: '2099-03-04T05:06:00.000Z' }, Math.floor(Date.now() / 1000) + 1);
    await t.syncChanges();
    await page.reload();
    await page.getByText('Your last payment for Pro failed.').waitFor();
    expect(await bodyText(page)).toContain('The plan stays until');
    expect(await bodyText(page)).toContain('2099');
    expect(await page.getByRole('alert').count()).toBe(0);

    await t.store.setAccountTier(id, 'pro', { until: '2099-01-01T00:00:00.000Z' });
    await t.store.applySubscriptionState(id, { ...state, status: 'canceled', graceUntil: null }, Math.floor(Date.now() / 1000) + 2);
    await t.syncChanges();
    await page.reload();
    await page.getByText('Your Pro plan is complimentary until').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await assertClean();
  });
});
