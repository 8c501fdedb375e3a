// The operator console in Chromium, end to end: an account made an operator the way the
// README says (`lmgate accounts set-role`) signs in, finds a customer by email, grants
// credits (the customer's dashboard shows the new balance), suspends the account (the
// customer's openai client gets 403), reactivates it, revokes its key (401), and the audit
// log shows all of it. Screenshots of each console page at desktop and phone sizes.
import type OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { cliDataDir, runCli } from '../helpers/cli-run.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage, PHONE } from './browser.js';
import { PASSWORD, signIn, signUp, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  // demo-echo free, so the customer's calls leave the balances this test counts whole.
  t = await startApp({ overrides: { signup: { credits: 5 }, models: { 'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 0, output: 0 } } } } });
});
afterAll(async () => {
  await browser.close();
  await t.close();
});

const CONSOLE_PAGES = [
  ['/admin', 'Overview'],
  ['/admin/accounts', 'Accounts'],
  ['/admin/codes', 'Codes'],
  ['/admin/catalog', 'Models and tiers'],
  ['/admin/audit', 'Audit log'],
] as const;

async function confirmIn(page: Page, dialogName: string, button: string): Promise<void> {
  const dialog = page.getByRole('dialog', { name: dialogName });
  await dialog.getByRole('button', { name: button }).click();
  await dialog.waitFor({ state: 'hidden' });
}

describe('the operator console', () => {
  it('finds an account, grants credits, suspends, reactivates and revokes a key, with every step in the audit log', async () => {
    const customer = await openPage(browser, t.origin);
    const customerEmail = uniqueEmail('customer');
    await signUp(customer.page, customerEmail);
    const customerAccount = (await t.store.findAccount(customerEmail))!;
    const { record: key, secret } = await t.app.commands.keys.create(customerAccount.id, 'production');
    const client: OpenAI = t.client(secret);
    const ask = () => client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] });
    expect((await ask()).choices[0]!.message.content).toBe('hi');

    // The README's first step, on the store the server uses.
    const operatorEmail = uniqueEmail('operator');
    const operator = await openPage(browser, t.origin);
    await signUp(operator.page, operatorEmail);
    const cli = cliDataDir('lmgate-console-cli-');
    try {
      const made = await runCli({ ...cli.env, LMGATE_DATA_DIR: t.dataDir }, ['accounts', 'set-role', operatorEmail, 'operator']);
      expect(made.code, made.stderr).toBe(0);
    } finally {
      cli.remove();
    }
    const { page, screenshot, assertClean } = operator;
    await page.reload();
    await page.getByRole('link', { name: 'Console' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(page.url()).toBe(`${t.origin}/admin`);
    await page.getByText('Upstream health').waitFor();
    await page.getByText('Requests per day').waitFor();
    await screenshot('console-overview');

    // Find the customer by email.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Accounts' }).click();
    await page.getByLabel('Search').fill(customerEmail.toUpperCase());
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('1–1 of 1').waitFor();
    await screenshot('console-accounts');
    await page.getByRole('link', { name: customerEmail }).click();
    await page.getByRole('heading', { level: 1, name: customerEmail }).waitFor();
    expect(await page.getByTestId('balance').innerText()).toBe('5.00');

    // Grant credits with a reason; the customer's dashboard shows the new balance.
    await page.getByRole('button', { name: 'Grant credits' }).click();
    const grant = page.getByRole('dialog', { name: 'Grant credits' });
    await grant.getByLabel('Credits').fill('7.5');
    await grant.getByLabel('Reason').fill('goodwill');
    await grant.getByRole('button', { name: 'Grant 7.50 credits' }).click();
    await grant.waitFor({ state: 'hidden' });
    await page.getByText('Granted 7.50 credits.').waitFor();
    await page.getByTestId('balance').getByText('12.50').waitFor();
    await page.getByText('Requests per day').waitFor();
    await customer.page.reload();
    await customer.page.getByTestId('balance').getByText('12.50').waitFor();
    await screenshot('console-account');

    // Suspend: the customer's client gets 403 at once; reactivate: it works again.
    await page.getByRole('button', { name: 'Suspend' }).click();
    await confirmIn(page, 'Suspend this account?', 'Suspend account');
    await page.getByTestId('status').getByText('suspended').waitFor();
    await expect(ask()).rejects.toMatchObject({ status: 403 });
    await page.getByRole('button', { name: 'Reactivate' }).click();
    await confirmIn(page, 'Reactivate this account?', 'Reactivate');
    await page.getByTestId('status').getByText('active').waitFor();
    expect((await ask()).choices[0]!.message.content).toBe('hi');

    // Revoke the key: 401.
    await page.getByRole('button', { name: 'Revoke production' }).click();
    await confirmIn(page, 'Revoke this key?', 'Revoke key');
    await page.getByText('The key “production” was revoked.').waitFor();
    await expect(ask()).rejects.toMatchObject({ status: 401, code: 'key_revoked' });

    // The audit log, newest first, says who did it to what.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    const rows = page.getByRole('row');
    await page.getByText('Revoked a key').waitFor();
    const text = (await rows.allInnerTexts()).slice(1, 6).join('\n');
    const order = ['Revoked a key', 'Reactivated the account', 'Suspended the account', 'Granted credits', 'Changed the role'].map((action) => text.indexOf(action));
    expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)), text).toBe(true);
    // In words: the key's name, the customer's email, credits rather than micro-credits.
    expect(text).toContain('Key “production”');
    expect(text).toContain(customerEmail);
    expect(text).toContain('balance: 5.00 credits → 12.50 credits');
    expect(text).toContain('status: active → suspended');
    expect(text).not.toContain('12500000');
    // The raw record is one click away.
    const raw = page.getByRole('row', { name: /Revoked a key/ }).getByText('Raw record');
    await raw.click();
    expect(await page.getByRole('row', { name: /Revoked a key/ }).locator('pre').innerText()).toContain(key.id);
    await screenshot('console-audit');

    // Codes and the catalogue.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Codes' }).click();
    await page.getByLabel('Credits each').fill('3');
    await page.getByRole('button', { name: 'Create codes' }).click();
    const created = (await page.getByTestId('new-codes').innerText()).trim();
    expect(created).toMatch(/^LMG-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    await page.getByRole('row', { name: new RegExp(`${created.slice(-4)}.*Open`) }).waitFor();
    await screenshot('console-codes');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models and tiers' }).click();
    await page.getByRole('heading', { name: 'Tiers', exact: true }).waitFor();
    await page.getByRole('main').getByText('demo-echo').first().waitFor();
    await screenshot('console-catalog');
    assertClean();
    customer.assertClean();
  });

  it('fits every console page on a phone, and shows a customer no console', async () => {
    const email = uniqueEmail('phone-operator');
    const account = await t.app.commands.accounts.signUp({ email, name: null, tier: 'free', passwordHash: await hashPassword(PASSWORD), creditsMicros: 0 });
    await t.app.commands.accounts.setRole(account.id, 'operator', { kind: 'cli', id: 'test' });
    const { page, screenshot, assertClean } = await openPage(browser, t.origin, PHONE);
    await signIn(page, email);
    const { account: shown } = await t.createAccount({ email: uniqueEmail('shown-on-phone') });
    for (const [path, heading] of [...CONSOLE_PAGES, [`/admin/accounts/${shown.id}`, shown.email] as const]) {
      await page.goto(path);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await page.locator('[aria-busy="true"], .loading').first().waitFor({ state: 'detached' });
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow, `${path} is wider than the phone`).toBeLessThanOrEqual(0);
      await screenshot(`console-${path === '/admin' ? 'overview' : path.startsWith('/admin/accounts/') ? 'account' : path.split('/').pop()}-phone`);
    }
    assertClean();

    const customer = await openPage(browser, t.origin);
    await signUp(customer.page, uniqueEmail('curious'));
    expect(await customer.page.getByRole('link', { name: 'Console' }).count()).toBe(0);
    await customer.page.goto('/admin');
    await customer.page.getByRole('heading', { level: 1, name: 'Operators only' }).waitFor();
    customer.assertClean();
  });
});
