// Every page of the dashboard and of the operator console, at a desktop size and a phone
// size (and checked at a tablet's and a small laptop's), for an account with two weeks of
// usage, several keys, refused requests and a varied balance history, so no page is
// empty. Each page must fit its screen's width (no sideways scrolling), keep the top
// bar's parts apart, show every figure, address and id whole, and is saved as
// page-<name>-<desktop|phone>.png in test/browser/screenshots/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import type { Account } from '../../src/store/store.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { DESKTOP, launchBrowser, openPage, PHONE, type GuardedPage } from './browser.js';
import { PASSWORD, signIn } from './dashboard.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const CLI = { kind: 'cli', id: 'test' } as const;

let browser: Browser;
let t: TestApp;
let customer: Account;
let operator: Account;
let resetToken: string;

beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp({
    overrides: {
      signup: { credits: 1 },
      contact: 'billing@example.com',
      smtp: { host: '127.0.0.1', port: 9, from: 'lmgate <no-reply@example.com>' },
    },
  });
  const passwordHash = await hashPassword(PASSWORD);
  const signUp = (email: string, name: string | null) => t.app.commands.accounts.signUp({ email, name, tier: 'free', passwordHash, creditsMicros: 1_000_000 });
  customer = await signUp('ada@example.com', 'Ada Lovelace');
  operator = await signUp('ops@example.com', 'Grace Hopper');
  await t.app.commands.accounts.setRole(operator.id, 'operator', CLI);
  for (const email of ['brook@example.com', 'cyd@example.com']) await signUp(email, null);

  const keys = {
    production: await t.app.commands.keys.create(customer.id, 'production'),
    staging: await t.app.commands.keys.create(customer.id, 'staging', { expiresAt: '2999-01-01T00:00:00.000Z', allowedModels: ['demo-echo'], allowedIps: null, rpm: 30, creditLimit: { amountMicros: 2_000_000, period: 'month' } }),
    laptop: await t.app.commands.keys.create(customer.id, 'laptop'),
  };
  // Two weeks of settled usage before today's live requests, so the charts have a shape.
  const models = ['demo-echo', 'demo-lorem', 'demo-embed'];
  const records = [];
  for (let day = 13; day >= 1; day--) {
    for (let i = 0; i < 1 + (day % 4); i++) {
      const model = models[(day + i) % 3]!;
      const promptTokens = 40 + ((day * 37 + i * 11) % 400);
      const completionTokens = model === 'demo-embed' ? 0 : 20 + ((day * 53 + i * 7) % 600);
      records.push({
        id: `usage_seed_${day}_${i}`,
        requestId: `req_seed_${day}_${i}`,
        accountId: customer.id,
        keyId: (i % 2 === 0 ? keys.production : keys.staging).record.id,
        model,
        promptTokens,
        ...PLAIN_USAGE,
        completionTokens,
        costMicros: Math.ceil(promptTokens * 0.5 + completionTokens * 1.5),
        latencyMs: 30 + i,
        status: 200,
        streamed: i % 2 === 1,
        finishReason: 'stop',
        memberId: null,
        createdAt: new Date(Date.now() - day * DAY_MS).toISOString(),
        // A few with the details beneath their tokens: parts priced apart, a counted stream cut short.
        ...(day === 2 && i === 0 && completionTokens > 0 ? { cachedTokens: Math.min(128, promptTokens), reasoningTokens: Math.min(64, completionTokens) } : {}),
        ...(day === 3 && i === 0 ? { basis: 'counted' as const, outcome: 'client_gone' as const, status: 499, finishReason: null } : {}),
      });
    }
  }
  await t.store.recordUsage(records);
  await t.app.commands.credits.grant({ accountId: customer.id, amountMicros: 12_500_000, reason: 'welcome' }, CLI);
  const [code] = await t.app.commands.codes.create({ amountMicros: 5_000_000, count: 1, expiresAt: null }, CLI);
  await t.app.commands.credits.redeemCode(customer.id, code!.code);
  await t.app.commands.codes.create({ amountMicros: 2_000_000, count: 2, expiresAt: '2999-01-01T00:00:00.000Z' }, CLI);
  await t.app.commands.keys.revoke(keys.laptop.record.id, customer.id);
  await t.syncChanges();

  // Today: answers on every demo model, and refusals the request log explains.
  const production = t.client(keys.production.secret);
  const staging = t.client(keys.staging.secret);
  await production.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'Hello there' }] });
  await production.chat.completions.create({ model: 'demo-lorem', max_tokens: 120, messages: [{ role: 'user', content: 'Tell me something.' }] });
  await production.embeddings.create({ model: 'demo-embed', input: ['first text', 'second text'] });
  await staging.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'From staging' }] });
  await staging.chat.completions.create({ model: 'demo-lorem', messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined);
  await production.chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined);
  await t.flushUsage();
  await t.app.refusals.flush();
  ({ token: resetToken } = await t.app.commands.accounts.issuePasswordReset(customer.id));
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Saved as screenshots; the in-between sizes (a tablet, a small laptop) are only checked. */
const SIZES = { desktop: DESKTOP, phone: PHONE, tablet: { width: 768, height: 1024 }, laptop: { width: 960, height: 720 } } as const;
const SHOWN: ReadonlySet<string> = new Set(['desktop', 'phone']);

/** Waits for the page's heading and for every section to have loaded. */
async function settle(page: Page, heading: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.locator('[aria-busy="true"], .loading').first().waitFor({ state: 'detached' });
}

// Strings, not functions: this file is compiled without the DOM's types.
const LAYOUT_PROBLEMS = `(() => {
  const problems = [];
  if (document.documentElement.scrollWidth > window.innerWidth) problems.push('the page scrolls sideways');
  const brand = document.querySelector('.brand')?.getBoundingClientRect();
  const account = document.querySelector('.account-menu')?.getBoundingClientRect();
  if (brand && account && account.width > 0 && brand.right > account.left) problems.push('the top bar’s account menu covers the name');
  // Where the pages are in the bar, none runs under the account menu.
  const links = [...document.querySelectorAll('.nav a')].map((link) => link.getBoundingClientRect()).filter((rect) => rect.width > 0);
  if (account && links.some((rect) => rect.right > account.left && rect.top < account.bottom && rect.bottom > account.top)) problems.push('the top bar’s pages run under the account menu');
  const linesOf = (element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
  };
  // A figure is read whole: never broken over two lines.
  for (const value of document.querySelectorAll('.stat-value')) {
    if (linesOf(value) > 1) problems.push('the figure ' + value.textContent + ' is broken over lines');
  }
  // An id in a table (a model's, a request's) reads whole on a wide screen.
  if (window.innerWidth >= 720) {
    for (const code of document.querySelectorAll('.table td code')) {
      if (linesOf(code) > 1) problems.push('the id ' + code.textContent + ' is broken over lines');
    }
  }
  for (const code of document.querySelectorAll('.base-urls code')) {
    if (code.scrollWidth > code.clientWidth) problems.push('the address ' + code.textContent + ' is cut');
  }
  // On a phone a table row is a card of label and value lines: what one cell holds (a
  // status and its reason, two badges) sits together, not spread across the line.
  for (const cell of document.querySelectorAll('.table.stacked td[data-label]')) {
    const parts = [...cell.children].map((child) => child.getBoundingClientRect()).filter((rect) => rect.width > 0);
    for (let i = 1; i < parts.length; i++) {
      if (Math.abs(parts[i].top - parts[i - 1].top) < 4 && parts[i].left - parts[i - 1].right > 16) {
        problems.push('the parts of ' + cell.dataset.label + ' (' + cell.textContent + ') are spread apart');
      }
    }
  }
  return problems;
})()`;

async function visit(guarded: GuardedPage, size: string, name: string, path: string, heading: string): Promise<void> {
  await guarded.page.goto(path);
  await settle(guarded.page, heading);
  expect(await guarded.page.evaluate(LAYOUT_PROBLEMS), `${path} (${size})`).toEqual([]);
  if (SHOWN.has(size)) await guarded.screenshot(`page-${name}-${size}`);
}

/** The labels of a chart's value axis, bottom up. */
async function valueAxis(page: Page, chart: string): Promise<string[]> {
  const ticks = page.getByRole('figure', { name: chart }).locator('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value');
  // The chart draws once it has measured its box, a moment after the page has its data.
  await ticks.first().waitFor();
  return ticks.allTextContents();
}

describe.each(Object.entries(SIZES))('every page at %s size', (size, viewport) => {
  it('the pages a visitor sees before signing in', async () => {
    const guarded = await openPage(browser, t.origin, viewport);
    await visit(guarded, size, 'signin', '/signin', 'Sign in');
    await visit(guarded, size, 'signup', '/signup', 'Create your account');
    await visit(guarded, size, 'forgot-password', '/forgot-password', 'Forgot password');
    await visit(guarded, size, 'reset-password', `/reset-password#token=${resetToken}`, 'Choose a new password');
    guarded.assertClean();
  });

  it('the dashboard, with usage on every page', async () => {
    const guarded = await openPage(browser, t.origin, viewport);
    await signIn(guarded.page, customer.email);
    for (const [name, path, heading] of [
      ['overview', '/', 'Overview'],
      ['keys', '/keys', 'API Keys'],
      ['usage', '/usage', 'Usage'],
      ['requests', '/requests', 'Request log'],
      ['models', '/models', 'Models'],
      ['billing', '/billing/plans', 'Billing'],
      ['settings', '/settings', 'Settings'],
    ] as const) {
      await visit(guarded, size, name, path, heading);
      const { page } = guarded;
      if (name === 'keys') {
        // A key set to work through a day says that day, not the next day's midnight.
        expect(await page.getByRole('row', { name: /staging/ }).innerText()).toContain('Expires Dec 31, 2998, end of day (UTC)');
      } else if (name === 'usage') {
        // Round steps on every axis, each credits tick with the same decimals.
        expect(await valueAxis(page, 'Credits per day')).toEqual(['0.000', '0.001', '0.002', '0.003']);
        expect(await valueAxis(page, 'Tokens per day')).toEqual(['0', '1K', '2K', '3K']);
        // A column of costs lines up: every amount with six decimals here.
        const costs = await page.getByTestId('recent-requests').locator('td[data-label="Credits"]').allInnerTexts();
        expect(costs.filter((cost) => !/^\d\.\d{6}$/.test(cost.replace(/^Credits\s*/, '')))).toEqual([]);
      } else if (name === 'models') {
        // An embedding model writes nothing: no output price, no output limit.
        expect(await page.getByRole('row', { name: /demo-embed/ }).innerText()).not.toMatch(/16,384|0\.00\s*$/m);
      }
    }
    // An address outside the app, typed into the browser: the app's own not-found page.
    await visit(guarded, size, 'not-found', '/billing', 'Page not found');
    guarded.assertClean();
  });

  it('the operator console', async () => {
    const guarded = await openPage(browser, t.origin, viewport);
    await signIn(guarded.page, operator.email);
    for (const [name, path, heading] of [
      ['console-overview', '/admin', 'Overview'],
      ['console-accounts', '/admin/accounts', 'Accounts'],
      ['console-account', `/admin/accounts/${customer.id}`, customer.email],
      ['console-codes', '/admin/codes', 'Codes'],
      ['console-catalog', '/admin/catalog', 'Models and tiers'],
      ['console-audit', '/admin/audit', 'Audit log'],
    ] as const) {
      await visit(guarded, size, name, path, heading);
      if (name === 'console-catalog') expect(await guarded.page.getByRole('row', { name: /^Pro\b/ }).innerText()).toContain('$20.00 a month');
    }
    // On a phone the way back to the dashboard is in the menu.
    if (size === 'phone' || size === 'tablet') {
      await guarded.page.getByRole('button', { name: 'Menu' }).click();
      await guarded.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click();
      await settle(guarded.page, 'Overview');
      expect(new URL(guarded.page.url()).pathname).toBe('/');
    }
    guarded.assertClean();
  });
});
