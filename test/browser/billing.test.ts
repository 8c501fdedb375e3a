// The Billing and Models pages in Chromium: a code made with `lmgate codes create` is
// redeemed and the balance grows, a free plan is chosen after confirming, paid plans
// point to the operator (payments are off here), and the tier's models are listed with
// their prices. With payments on: payments.test.ts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage } from './browser.js';
import { signUp, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp({
    overrides: {
      signup: { credits: 10 },
      contact: 'billing@example.test',
      models: {
        'demo-echo': { backend: 'demo', kind: 'echo', price: { input: 0.15, output: 0.6 } },
        'demo-lorem': { backend: 'demo', kind: 'lorem', price: { input: 1.25, output: 10 }, context: 32_768, max_output: 4_096 },
      },
      tiers: {
        free: { rpm: 60, tpm: 100_000, concurrency: 4, models: ['demo-*'] },
        hobby: { rpm: 120, tpm: 200_000, concurrency: 8, models: ['demo-*'], description: 'More room, still free' },
        pro: { rpm: 600, tpm: 2_000_000, concurrency: 32, models: ['*'], subscription: true, price_month: 20, credits_month: 25 },
      },
    },
  });
});
afterAll(async () => {
  await browser.close();
  await t.close();
});

/** `lmgate codes create --credits N --json` against the running app's store. */
async function createCode(credits: number): Promise<string> {
  const configFile = join(t.dataDir, 'cli.yaml');
  writeFileSync(configFile, '');
  const out: string[] = [];
  const code = await main(['codes', 'create', '--credits', String(credits), '--json'], { out: (line) => out.push(line), err: () => undefined }, {
    LMGATE_DATA_DIR: t.dataDir,
    LMGATE_CONFIG: configFile,
  });
  expect(code).toBe(0);
  const [created] = JSON.parse(out.join('\n')) as { code: string }[];
  expect(created?.code).toMatch(/^LMG-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
  return created!.code;
}

describe('billing', () => {
  it('a code from the operator is redeemed once, and the balance and history show it', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('redeemer'));
    const code = await createCode(25);

    await page.getByRole('link', { name: 'Redeem a code' }).click();
    await page.getByRole('heading', { level: 1, name: 'Billing' }).waitFor();
    // The overview's link lands in the code field.
    expect(await page.evaluate('document.activeElement.name')).toBe('code');
    const balance = page.getByRole('main').getByTestId('balance');
    await page.getByTestId('ledger').waitFor();
    expect(await balance.textContent()).toBe('10.00');

    await page.getByLabel('Code', { exact: true }).fill(code.toLowerCase());
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('status').getByText('25.00 credits were added. Your balance is now 35.00 credits.').waitFor();
    await page.getByTestId('ledger').getByText('+25.00').waitFor();
    expect(await balance.textContent()).toBe('35.00');
    expect(await page.getByLabel('Code', { exact: true }).inputValue()).toBe('');
    await screenshot('billing-redeemed');

    await page.getByLabel('Code', { exact: true }).fill(code);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('alert').getByText('This code has already been redeemed.').waitFor();
    await page.getByLabel('Code', { exact: true }).fill('LMG-0000-0000-0000');
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('alert').getByText('Unknown code.').waitFor();
    expect(await balance.textContent()).toBe('35.00');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('main').getByTestId('balance').getByText('35.00').waitFor();
    assertClean();
  });

  it('free plans are chosen after confirming; paid plans point to the operator', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('switcher'));
    await page.goto('/billing/plans');
    const plan = (name: string) => page.getByRole('article', { name });

    await plan('Free').getByText('Current plan').waitFor();
    expect(await plan('Pro').innerText()).toMatch(/\$20\.00\s*per month/);
    expect(await plan('Pro').innerText()).toContain('25.00 credits included every month');
    // "Free" once (the name); no glob patterns, the models by name; the operator's contact.
    expect((await plan('Free').innerText()).match(/Free/g)).toHaveLength(1);
    expect(await plan('Free').innerText()).toContain('No monthly fee');
    expect(await plan('Free').innerText()).not.toContain('demo-*');
    expect(await plan('Free').getByRole('listitem').allInnerTexts()).toEqual(['demo-echo', 'demo-lorem']);
    expect(await plan('Pro').innerText()).toContain('To subscribe to this plan, contact the operator (billing@example.test).');
    expect(await plan('Pro').getByRole('link', { name: 'billing@example.test' }).getAttribute('href')).toBe('mailto:billing@example.test');
    expect(await plan('Pro').getByRole('button').count()).toBe(0);
    // Without payments.stripe, nothing of Stripe's is offered.
    await page.getByTestId('ledger').or(page.getByText('No changes yet.')).waitFor();
    for (const name of ['Add credits', 'Auto-recharge', 'Payments']) expect(await page.getByRole('heading', { name, exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Subscribe|Manage subscription|Pay/ }).count()).toBe(0);
    expect(await plan('Hobby').innerText()).toMatch(/Requests per minute\s*120/);
    await screenshot('billing-plans');

    await plan('Hobby').getByRole('button', { name: 'Switch to Hobby' }).click();
    const confirm = page.getByRole('dialog', { name: 'Switch to the Hobby plan?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await plan('Free').getByText('Current plan').waitFor();

    await plan('Hobby').getByRole('button', { name: 'Switch to Hobby' }).click();
    await confirm.getByRole('button', { name: 'Switch to Hobby' }).click();
    await page.getByRole('status').getByText('You are now on the Hobby plan.').waitFor();
    await plan('Hobby').getByText('Current plan').waitFor();
    expect(await plan('Free').getByRole('button', { name: 'Switch to Free' }).count()).toBe(1);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.getByRole('region', { name: 'Plan' }).getByText('Hobby', { exact: true }).waitFor();
    expect(await page.getByRole('region', { name: 'Plan' }).innerText()).toMatch(/Requests per minute\s*120/);
    assertClean();
  });

  it('the models page lists the tier’s models with prices and limits', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('browser'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models' }).click();
    const lorem = page.getByRole('row', { name: /demo-lorem/ });
    await lorem.waitFor();
    expect(await page.getByRole('row').count()).toBe(3);
    expect(await lorem.innerText()).toMatch(/^demo-lorem\s+1\.25\s+10\.00\s+32,768 tokens\s+4,096 tokens$/);
    expect(await page.getByRole('row', { name: /demo-echo/ }).innerText()).toMatch(/^demo-echo\s+0\.15\s+0\.60\s+128,000 tokens\s+16,384 tokens$/);
    await screenshot('models');
    assertClean();
  });
});
