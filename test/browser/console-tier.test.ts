// The console's *Change tier* (issue 31, wall 3): choosing a tier that needs a subscription
// the account lacks warns before and after, and the account is marked as refused; the same
// change made complimentary until a date needs no subscription, and the customer's calls answer.
import { APIError } from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage } from './browser.js';
import { PASSWORD, signIn, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp();
});
afterAll(async () => {
  await browser.close();
  await t.close();
});

describe('the console tier control', () => {
  it('warns of a tier without its subscription, and gives it complimentary until a date', async () => {
    const email = uniqueEmail('tier-operator');
    const operator = await t.app.commands.accounts.signUp({ email, name: null, tier: 'free', passwordHash: await hashPassword(PASSWORD), creditsMicros: 0 });
    await t.app.commands.accounts.setRole(operator.id, 'operator', { kind: 'cli', id: 'test' });
    const { account, apiKey } = await t.createAccount({ email: uniqueEmail('tiered') });
    const ask = () =>
      t
        .client(apiKey)
        .chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] })
        .then(
          () => 200,
          (err: unknown) => (err instanceof APIError ? err.status : Promise.reject(err)),
        );

    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signIn(page, email);
    await page.goto(`/admin/accounts/${account.id}`);
    await page.getByRole('heading', { level: 1, name: account.email }).waitFor();

    await page.getByRole('button', { name: 'Change tier' }).click();
    const dialog = page.getByRole('dialog', { name: 'Change tier' });
    await dialog.getByLabel('Tier').selectOption('pro');
    expect(await dialog.innerText()).toContain('Pro needs a subscription this account does not have');
    await dialog.getByRole('button', { name: 'Change tier' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByText(/pro needs a subscription .* does not have: every API call is refused/).waitFor();
    await page.getByText('no subscription: API refused').waitFor();
    await t.syncChanges();
    expect(await ask()).toBe(403);

    await page.getByRole('button', { name: 'Change tier' }).click();
    await dialog.getByLabel('Complimentary: no subscription needed').check();
    await dialog.getByLabel('Until (optional, through that day, UTC)').fill('2099-12-31');
    await screenshot('console-tier-comp');
    await dialog.getByRole('button', { name: 'Change tier' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByText(/complimentary until/).waitFor();
    expect(await page.getByText('no subscription: API refused').count()).toBe(0);
    expect(await t.store.findAccount(account.id)).toMatchObject({ tier: 'pro', comp: { tier: 'pro', until: '2100-01-01T00:00:00.000Z' } });
    await t.syncChanges();
    expect(await ask()).toBe(200);
    assertClean();
  });
});
