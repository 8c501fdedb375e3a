// Organisations in the dashboard, in Chromium: a customer makes one with the account
// switcher, adds someone who already has an account, and that member switches to it, makes
// a key and spends from the organisation's balance with the openai client. The owner then
// sets the member's monthly budget below what they spent, the member's next request gets
// 402 member_budget, the owner reads the member's usage and requests with the member
// filter, and removes them with their keys. The Organisation page must fit a desktop, a
// small laptop and a phone, and is saved as org-<desktop|laptop|phone>.png in
// test/browser/screenshots/.
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { DESKTOP, launchBrowser, openPage, PHONE } from './browser.js';
import { PASSWORD, signIn, signUp, uniqueEmail } from './dashboard.js';

// 1 input token = 1,000 micro-credits, 1 output token = 2,000 (as in test/api/org-budgets.test.ts).
const OVERRIDES = {
  default_tier: 'metered',
  tiers: { metered: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 100, models: ['*'] } },
  models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 1000, price: { input: 1000, output: 2000 } } },
} as const;
const LAPTOP = { width: 960, height: 720 } as const;

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp({ overrides: OVERRIDES });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

// A string, not a function: this file is compiled without the DOM's types. The top bar's
// part of every-page.test.ts's check, and no sideways scrolling.
const LAYOUT_PROBLEMS = `(() => {
  const problems = [];
  if (document.documentElement.scrollWidth > window.innerWidth) problems.push('the page scrolls sideways');
  const brand = document.querySelector('.brand')?.getBoundingClientRect();
  const account = document.querySelector('.account-menu')?.getBoundingClientRect();
  if (brand && account && account.width > 0 && brand.right > account.left) problems.push('the top bar’s account menu covers the name');
  const links = [...document.querySelectorAll('.nav a')].map((link) => link.getBoundingClientRect()).filter((rect) => rect.width > 0);
  if (account && links.some((rect) => rect.right > account.left && rect.top < account.bottom && rect.bottom > account.top)) problems.push('the top bar’s pages run under the account menu');
  if (links.some((rect) => rect.bottom > (document.querySelector('.topbar')?.getBoundingClientRect().bottom ?? 0))) problems.push('the top bar’s pages wrap below it');
  return problems;
})()`;

const ask = (client: OpenAI) =>
  client.chat.completions.create({ model: 'priced-echo', messages: [{ role: 'user', content: 'Hello there, general Kenobi' }], max_tokens: 5 });

/** Opens the account switcher in the top bar and chooses an account. */
async function switchTo(page: Page, account: string | RegExp): Promise<void> {
  const bar = page.locator('.account-menu');
  await bar.getByRole('button', { name: /^Account:/ }).click();
  await bar.getByRole('list', { name: 'Accounts' }).getByRole('button', { name: account }).click();
  await bar.getByRole('button', { name: /^Account:/, expanded: false }).waitFor();
}

async function openOrgPage(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organisation' }).click();
  await page.getByRole('heading', { level: 1, name: 'Organisation' }).waitFor();
  await page.getByTestId('org-budgets').waitFor();
}

describe('organisations in the dashboard', () => {
  it('an owner makes an organisation and adds a member, who spends from it until the budget the owner sets; the owner reads their usage and removes them with their keys', async () => {
    const ownerEmail = uniqueEmail('owner');
    const memberEmail = uniqueEmail('member');
    const member = await t.app.commands.accounts.signUp({ email: memberEmail, name: 'Mo Member', tier: 'metered', passwordHash: await hashPassword(PASSWORD), creditsMicros: 0 });

    // The owner makes the organisation from the switcher and lands on its page.
    const owner = await openPage(browser, t.origin);
    await signUp(owner.page, ownerEmail);
    const bar = owner.page.locator('.account-menu');
    await bar.getByRole('button', { name: 'Account: Personal' }).click();
    await bar.getByRole('button', { name: 'New organisation' }).click();
    const naming = owner.page.getByRole('dialog', { name: 'New organisation' });
    await naming.getByLabel('Organisation name').fill('Acme Research');
    await naming.getByRole('button', { name: 'Create organisation' }).click();
    await owner.page.waitForURL(/\/org$/);
    await owner.page.getByTestId('org-members').waitFor();
    await bar.getByRole('button', { name: 'Account: Acme Research' }).waitFor();
    expect(await owner.page.locator('.page-header').innerText()).toContain('Acme Research · you are an owner.');

    // An unknown address is refused in words; an existing account becomes a member.
    const adding = owner.page.getByRole('form', { name: 'Add a member' });
    await adding.getByLabel('Email').fill('nobody@example.test');
    await adding.getByRole('button', { name: 'Add member' }).click();
    await adding.getByText('No account uses nobody@example.test.').waitFor();
    await adding.getByLabel('Email').fill(memberEmail);
    await adding.getByLabel('Role').selectOption('member');
    await adding.getByRole('button', { name: 'Add member' }).click();
    await adding.getByText(`${memberEmail} is a member now.`).waitFor();
    const memberRow = owner.page.getByTestId('org-members').getByRole('row', { name: /Mo Member/ });
    expect(await memberRow.getByLabel(`Role of ${memberEmail}`).inputValue()).toBe('member');

    // Alerts: the owner sets a balance threshold and the shares of each budget.
    const alerts = owner.page.getByRole('form', { name: 'Alerts' });
    await alerts.getByLabel('Alert when the balance falls below (credits)').fill('2.5');
    await alerts.getByLabel('Alert at these shares of each budget (%)').fill('90, 50');
    await alerts.getByRole('button', { name: 'Save alerts' }).click();
    await alerts.getByText('Alerts saved.').waitFor();

    const [membership] = await t.store.listMemberships(member.id);
    const org = membership!.org;
    expect(await t.store.findAlertSettings(org.id)).toMatchObject({ balanceBelowMicros: 2_500_000, budgetThresholds: [50, 90] });
    await t.app.commands.credits.grant({ accountId: org.id, amountMicros: 10_000_000, reason: 'test' });
    const ownerAccount = (await t.store.findAccount(ownerEmail))!;
    const ownerKey = await t.app.commands.keys.create(org.id, 'owner laptop', undefined, undefined, ownerAccount.id);
    await ask(t.client(ownerKey.secret));

    // The member switches to the organisation, sees it as a member, and makes a key there.
    const other = await openPage(browser, t.origin);
    await signIn(other.page, memberEmail);
    await switchTo(other.page, /Acme Research/);
    await openOrgPage(other.page);
    // A member reads the alerts, and has no form to change them.
    expect(await other.page.getByTestId('alert-settings').innerText()).toMatch(/2\.50 credits[\s\S]*50 %, 90 %/);
    expect(await other.page.getByRole('form', { name: 'Alerts' }).count()).toBe(0);
    expect(await other.page.locator('.page-header').innerText()).toContain('you are a member.');
    expect(await other.page.getByTestId('org-members').locator('select').count()).toBe(0);
    expect(await other.page.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(await other.page.getByRole('form', { name: 'Add a member' }).count()).toBe(0);
    expect(await other.page.getByRole('button', { name: /^Set the budget/ }).count()).toBe(0);
    await other.page.getByRole('button', { name: 'Leave organisation' }).waitFor();

    await other.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
    await other.page.getByRole('button', { name: 'Generate New Key' }).click();
    await other.page.getByRole('dialog', { name: 'Generate a new API key' }).getByLabel('Key name').fill('mo');
    await other.page.getByRole('button', { name: 'Generate key' }).click();
    const secret = (await other.page.getByTestId('new-key-secret').textContent()) ?? '';
    await other.page.getByRole('button', { name: 'Done' }).click();
    const client = t.client(secret);
    for (let i = 0; i < 3; i++) expect((await ask(client)).usage?.completion_tokens).toBeGreaterThan(0);
    await t.flushUsage();

    // The owner sets the member's budget below what they spent: the next request is refused.
    await openOrgPage(owner.page);
    await owner.page.getByRole('button', { name: 'Set the budget of Mo Member' }).click();
    const budget = owner.page.getByRole('dialog', { name: 'Monthly budget: Mo Member' });
    await budget.getByLabel('Credits a month').fill('0.05');
    await budget.getByRole('button', { name: 'Save budget' }).click();
    await budget.waitFor({ state: 'hidden' });
    const budgetRow = owner.page.getByTestId('org-budgets').getByRole('row', { name: /Mo Member/ });
    expect(await budgetRow.innerText()).toMatch(/0\.05[\s\S]*100 %/);
    await owner.page.evaluate('window.scrollTo(0, 0)');
    await owner.screenshot('org-budget-spent');
    await t.syncChanges();
    const refusal = await ask(client).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(OpenAI.APIError);
    expect((refusal as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((refusal as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ reason: 'member_budget' });
    await t.flushUsage();
    await t.app.refusals.flush();

    // The owner's usage: everyone's, then the member's alone.
    await owner.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    const recent = owner.page.getByTestId('recent-requests');
    await recent.waitFor();
    expect(await recent.locator('tbody tr').count()).toBe(4);
    await owner.page.getByLabel('Member').selectOption({ label: `Mo Member (${memberEmail})` });
    await owner.page.waitForURL(new RegExp(`member=${member.id}`));
    await owner.page.getByRole('region', { name: 'Totals for the range' }).getByText(/Requests\s*3\b/).waitFor();
    expect(await recent.locator('tbody tr').count()).toBe(3);
    expect(await recent.innerText()).not.toContain('owner laptop');
    expect(await owner.page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')).toContain(`member=${member.id}`);

    // And the member's requests, the refused one with its reason.
    await owner.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Requests' }).click();
    await owner.page.getByTestId('request-log').waitFor();
    await owner.page.getByLabel('Member').selectOption(member.id);
    await owner.page.waitForURL(new RegExp(`member=${member.id}`));
    const log = owner.page.getByTestId('request-log');
    await log.getByText('Member budget').waitFor();
    // The URL changes before the filtered page arrives: wait for the member's rows alone.
    await expect.poll(() => log.locator('tbody tr').count(), { timeout: 10_000 }).toBe(4);
    expect(await log.innerText()).not.toContain('owner laptop');

    // The member sees no member filter: their own usage only.
    await other.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    await other.page.getByTestId('recent-requests').waitFor();
    expect(await other.page.getByLabel('Member').count()).toBe(0);
    expect(await other.page.getByTestId('recent-requests').locator('tbody tr').count()).toBe(3);

    // Removed with their keys: the member's key stops at once.
    await openOrgPage(owner.page);
    await owner.page.getByRole('button', { name: `Remove ${memberEmail}` }).click();
    const removing = owner.page.getByRole('dialog', { name: 'Remove this member?' });
    expect(await removing.getByLabel('Also revoke the API keys they made for it').isChecked()).toBe(true);
    await removing.getByRole('button', { name: 'Remove and revoke keys' }).click();
    await removing.waitFor({ state: 'hidden' });
    await memberRow.waitFor({ state: 'detached' });
    await t.syncChanges();
    expect(await ask(client).catch((err: unknown) => err)).toMatchObject({ status: 401 });

    // Back to the personal account: the Organisation page leaves the bar.
    await switchTo(owner.page, 'Personal account');
    await owner.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organisation' }).waitFor({ state: 'detached' });
    owner.assertClean();
    other.assertClean();
  });

  it('the Organisation page fits a desktop, a small laptop and a phone', async () => {
    const email = uniqueEmail('layout');
    const person = await t.app.commands.accounts.signUp({ email, name: 'Lay Out', tier: 'metered', passwordHash: await hashPassword(PASSWORD), creditsMicros: 0 });
    const org = await t.app.commands.orgs.create('Northwind Traders International Holdings', person, 'metered');
    for (const [i, role] of (['admin', 'billing', 'member'] as const).entries()) {
      const colleague = await t.store.createAccount({ email: `colleague${i}-${process.pid}@example.test`, tier: 'metered' });
      await t.app.commands.orgs.setMember(org.id, colleague, role);
      if (i === 0) await t.app.commands.orgs.setBudget(org.id, colleague.id, 25_000_000);
    }
    await t.app.commands.orgs.setBudget(org.id, null, 100_000_000);

    for (const [size, viewport] of [['desktop', DESKTOP], ['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const guarded = await openPage(browser, t.origin, viewport);
      const { page } = guarded;
      await signIn(page, email);
      expect(await page.evaluate(LAYOUT_PROBLEMS), `${size}, personal account`).toEqual([]);
      if (size === 'phone') {
        await page.getByRole('button', { name: 'Menu' }).click();
        const menu = page.getByRole('navigation', { name: 'Main' });
        await menu.getByRole('button', { name: 'Account: Personal' }).click();
        await menu.getByRole('list', { name: 'Accounts' }).getByRole('button', { name: /Northwind/ }).click();
        await page.getByRole('button', { name: 'Menu', expanded: false }).waitFor();
        await page.getByRole('button', { name: 'Menu' }).click();
        await guarded.screenshot('org-phone-menu');
        await menu.getByRole('link', { name: 'Organisation' }).click();
        await page.getByRole('heading', { level: 1, name: 'Organisation' }).waitFor();
        await page.getByTestId('org-budgets').waitFor();
      } else {
        await switchTo(page, /Northwind/);
        await openOrgPage(page);
      }
      expect(await page.getByTestId('org-members').locator('tbody tr').count()).toBe(4);
      expect(await page.getByTestId('org-budgets').getByRole('row', { name: /Whole organisation/ }).innerText()).toMatch(/100\.00/);
      await guarded.screenshot(`org-${size}`);
      expect(await page.evaluate(LAYOUT_PROBLEMS), size).toEqual([]);
      if (size === 'desktop') {
        await page.locator('.account-menu').getByRole('button', { name: /^Account:/ }).click();
        await guarded.screenshot('org-switcher-desktop');
        expect(await page.evaluate(LAYOUT_PROBLEMS), 'switcher open').toEqual([]);
      }
      guarded.assertClean();
    }
  });

  it('an operator’s top bar keeps the switcher and the way to the console apart, in an organisation too', async () => {
    const email = uniqueEmail('operator');
    const person = await t.app.commands.accounts.signUp({ email, name: null, tier: 'metered', passwordHash: await hashPassword(PASSWORD), creditsMicros: 0 });
    await t.app.commands.accounts.setRole(person.id, 'operator', { kind: 'cli', id: 'test' });
    await t.app.commands.orgs.create('Contoso Pharmaceuticals Worldwide', person, 'metered');

    for (const [size, viewport] of [['desktop', DESKTOP], ['laptop', LAPTOP]] as const) {
      const { page, assertClean } = await openPage(browser, t.origin, viewport);
      await signIn(page, email);
      expect(await page.evaluate(LAYOUT_PROBLEMS), `${size}, personal account`).toEqual([]);
      await switchTo(page, /Contoso/);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organisation' }).waitFor();
      expect(await page.evaluate(LAYOUT_PROBLEMS), `${size}, organisation`).toEqual([]);
      // Where the bar has no room for it, the console is in the switcher's list.
      if (size === 'laptop') await page.locator('.account-menu').getByRole('button', { name: /^Account:/ }).click();
      await page.locator('.account-menu').getByRole('link', { name: 'Console' }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/admin');
      assertClean();
    }
  });
});
