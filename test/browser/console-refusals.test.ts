// The console shows what went wrong, in Chromium: Overview counts requests refused before
// any model in "Answers by status" and in the error rate; an account's page lists them in
// its request log with their reason (a 422 with the field its body named) and shows its
// keys' limits; an account is created from the console. Screenshots at desktop and phone size.
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage, PHONE } from './browser.js';
import { PASSWORD, signIn, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp({ overrides: { models: { 'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 2, output: 4 } } } } });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function operatorPage(viewport?: typeof PHONE) {
  const email = uniqueEmail('refusals-operator');
  const account = await t.app.commands.accounts.signUp({ email, name: null, tier: 'free', passwordHash: await hashPassword(PASSWORD), creditsMicros: 0 });
  await t.app.commands.accounts.setRole(account.id, 'operator', { kind: 'cli', id: 'test' });
  const guarded = await openPage(browser, t.origin, viewport);
  await signIn(guarded.page, email);
  return guarded;
}

describe('the console shows what went wrong', () => {
  it('counts refusals on Overview and lists them with their reason on the account’s page', async () => {
    const { account } = await t.createAccount({ email: uniqueEmail('refused-customer'), credits: 5 });
    const { secret } = await t.app.commands.keys.create(account.id, 'backend', { expiresAt: null, allowedModels: ['demo-*'], allowedIps: null, rpm: 30, creditLimit: { amountMicros: 2_000_000, period: 'month' } });
    const client = t.client(secret);
    await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hello' }] });
    const fail = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('the request succeeded'), (err: unknown) => err);
    expect(await fail(client.chat.completions.create({ model: 'demo-nope', messages: [{ role: 'user', content: 'hi' }] }))).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await fail(client.chat.completions.create({ model: 'demo-echo', messages: [] }))).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(await fail(client.chat.completions.create({ model: 'demo-echo', messages: [] }))).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    await Promise.all([t.flushUsage(), t.app.refusals.flush()]);

    const { page, screenshot, assertClean } = await operatorPage();
    await page.goto('/admin');
    await page.getByRole('heading', { name: 'Answers by status' }).waitFor();
    // One answer, three refusals: 3 of 4 failed.
    expect(await page.getByTestId('stat-requests').innerText()).toBe('4');
    expect(await page.getByTestId('stat-error-rate').innerText()).toBe('75.0%');
    expect(await page.getByTestId('status-200').innerText()).toBe('200 1');
    expect(await page.getByTestId('status-404').innerText()).toBe('404 1 (all refused before any model)');
    expect(await page.getByTestId('status-422').innerText()).toBe('422 2 (all refused before any model)');
    await screenshot('console-overview-refusals');

    await page.goto(`/admin/accounts/${account.id}`);
    const log = page.getByTestId('account-request-log');
    await log.waitFor();
    const rows = await log.locator('tbody tr').allInnerTexts();
    expect(rows).toHaveLength(4);
    expect(rows[0]).toContain('Invalid request: messages');
    expect(rows[2]).toContain('Unknown model');
    expect(rows[3]).toContain('200');
    const keys = await page.getByRole('table').first().innerText();
    expect(keys).toContain('30 requests/min');
    expect(keys).toContain('2.00 credits a month');
    expect(keys).toContain('models: demo-*');
    await screenshot('console-account-request-log');
    await page.getByLabel('Outcome').selectOption('succeeded');
    // The page's CSP allows no eval, so the wait polls from here rather than in the page.
    await expect.poll(() => page.locator('[data-testid="account-request-log"] tbody tr').count()).toBe(1);
    assertClean();

    const phone = await operatorPage(PHONE);
    for (const [path, name] of [['/admin', 'overview-refusals'], [`/admin/accounts/${account.id}`, 'account-request-log']] as const) {
      await phone.page.goto(path);
      await phone.page.getByRole('heading', { level: 1 }).first().waitFor();
      await phone.page.locator('[aria-busy="true"], .loading').first().waitFor({ state: 'detached' });
      if (path !== '/admin') await phone.page.getByTestId('account-request-log').waitFor();
      const overflow = await phone.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow, `${path} is wider than the phone`).toBeLessThanOrEqual(0);
      await phone.screenshot(`console-${name}-phone`);
    }
    phone.assertClean();
  });

  it('creates an account from the console, newest first in the list', async () => {
    const { page, screenshot, assertClean } = await operatorPage();
    await page.goto('/admin/accounts');
    const email = uniqueEmail('made-in-console');
    await page.getByRole('button', { name: 'New account' }).click();
    const dialog = page.getByRole('dialog', { name: 'New account' });
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Starting credits').fill('2.5');
    await screenshot('console-new-account');
    await dialog.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: email }).waitFor();
    expect(await page.getByTestId('balance').innerText()).toBe('2.50');
    await page.goto('/admin/accounts');
    await page.getByRole('link', { name: email }).waitFor();
    expect(await page.locator('tbody tr').first().innerText()).toContain(email);
    const created = (await t.store.findAccount(email))!;
    const audit = await t.store.listAudit({ limit: 5, targetId: created.id });
    expect(audit.map((entry) => entry.action)).toEqual(['account.create']);
    assertClean();
  });
});
