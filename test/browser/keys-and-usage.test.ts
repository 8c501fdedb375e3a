// The API Keys and Usage pages in Chromium, end to end: a key generated in the browser is
// shown once, copied, used by the official `openai` client, shows up in the usage, and
// stops working the moment it is revoked in the browser.
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage } from './browser.js';
import { bodyText, signUp, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  // Credits at sign-up so the new key can spend; demo-echo priced so usage costs something.
  t = await startApp({
    overrides: {
      signup: { credits: 5 },
      models: { 'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 2, output: 4 } } },
    },
  });
});
afterAll(async () => {
  await browser.close();
  await t.close();
});

describe('API keys and usage', () => {
  it('a generated key is shown once, copies, works with the openai client, shows in the usage, and is refused once revoked', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('builder'));

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
    await page.getByText('No keys yet').waitFor();
    await screenshot('keys-empty');

    await page.getByRole('button', { name: 'Generate New Key' }).click();
    const naming = page.getByRole('dialog', { name: 'Generate a new API key' });
    await naming.getByLabel('Key name').fill('laptop');
    await screenshot('keys-generate');
    await naming.getByRole('button', { name: 'Generate key' }).click();

    const created = page.getByRole('dialog', { name: 'Your new API key' });
    await created.waitFor();
    expect(await created.innerText()).toContain('it cannot be shown again');
    const secret = (await created.getByTestId('new-key-secret').textContent()) ?? '';
    expect(secret).toMatch(/^sk-lmg-[0-9A-Za-z]{49}$/);
    await created.getByRole('button', { name: 'Copy API key' }).click();
    await created.getByRole('button', { name: 'Copied API key' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await screenshot('keys-secret');
    await created.getByRole('button', { name: 'Done' }).click();
    await created.waitFor({ state: 'hidden' });

    // Listed with prefix and last four, and the secret itself is gone for good.
    const row = page.getByRole('row', { name: /laptop/ });
    expect(await row.innerText()).toContain(`…${secret.slice(-4)}`);
    expect(await row.innerText()).toContain('Active');
    expect(await bodyText(page)).not.toContain(secret);
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);

    // No usage yet: the page says so instead of drawing empty charts.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'No requests in these 30 days' }).waitFor();
    expect(await page.locator('figure.chart').count()).toBe(0);

    // The key works with the official client against the first base URL shown.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    const baseURL = (await page.locator('.base-urls code').first().textContent()) ?? '';
    expect(baseURL).toBe(t.baseURL);
    const client = new OpenAI({ apiKey: secret, baseURL, maxRetries: 0 });
    for (const content of ['Hello!', 'How are you today?', 'Tell me more.']) {
      const completion = await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content }] });
      expect(completion.choices[0]?.message.content).toBe(content);
    }
    await t.flushUsage();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
    const recent = page.getByTestId('recent-requests');
    await recent.waitFor();
    expect(await recent.locator('tbody tr').count()).toBe(3);
    expect(await recent.locator('tbody tr').first().innerText()).toMatch(/demo-echo[\s\S]*laptop[\s\S]*200/);
    // Three charts of the days and one of the split, each with today's bar drawn.
    expect(await page.locator('figure.chart .recharts-wrapper > svg.recharts-surface').count()).toBe(4);
    expect(await page.locator('figure.chart .recharts-bar-rectangle path').count()).toBe(5);
    expect(await page.getByRole('region', { name: 'Totals for the range' }).innerText()).toMatch(/Requests\s*3\b/);
    expect(await page.getByRole('table', { name: 'Requests by model over the range' }).innerText()).toMatch(/demo-echo\s*3/);
    await page.getByLabel('Split by').selectOption('key');
    await page.getByLabel('Show').selectOption('costMicros');
    await page.getByRole('heading', { name: 'Credits by key' }).waitFor();
    expect(await page.getByRole('table', { name: 'Credits by key over the range' }).innerText()).toContain('laptop');

    // Presets and the CSV export follow the range.
    await page.getByRole('button', { name: 'Last 7 days' }).click();
    await page.waitForURL(/\/usage\?from=\d{4}-\d{2}-\d{2}&to=\d{4}-\d{2}-\d{2}$/);
    await page.getByRole('button', { name: 'Last 7 days', pressed: true }).waitFor();
    const range = new URL(page.url()).searchParams;
    const exportHref = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    expect(exportHref).toBe(`/api/dashboard/usage.csv?from=${range.get('from')}&to=${range.get('to')}`);
    const csv = await page.request.get(exportHref ?? '');
    expect(csv.status()).toBe(200);
    expect((await csv.text()).trim().split('\n')).toHaveLength(4);
    await recent.waitFor();
    await screenshot('usage');

    // Revoked in the browser, after confirming: the client is refused at once.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke this key?' });
    await confirm.waitFor();
    await screenshot('keys-revoke');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect(await row.innerText()).toContain('Active');
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await row.getByText('Revoked').waitFor();
    expect(await page.getByRole('button', { name: 'Revoke laptop' }).count()).toBe(0);
    await screenshot('keys');

    const refused = await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'Still there?' }] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('key_revoked');
    assertClean();
  });

  it('a key reported found in public is revoked, and the Overview and API Keys pages say where it was found', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    const email = uniqueEmail('leaker');
    await signUp(page, email);
    const account = (await t.store.findAccount(email))!;
    const { secret } = await t.app.commands.keys.create(account.id, 'ci runner');
    const url = 'https://github.com/someone/repo/blob/main/.env';
    const res = await fetch(`${t.origin}/api/keys/leak-report`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ keys: [secret], url }) });
    expect(res.status).toBe(200);

    await page.goto('/');
    const notice = page.getByRole('alert').filter({ hasText: 'was found in public' });
    await notice.waitFor();
    expect(await notice.innerText()).toContain(`Your key “ci runner” (${secret.slice(0, 11)}…${secret.slice(-4)}) was found in public at ${url}`);
    expect(await notice.getByRole('link', { name: url }).getAttribute('href')).toBe(url);
    await screenshot('overview-leaked-key');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
    await page.getByRole('row', { name: /ci runner/ }).getByText('Revoked: leaked').waitFor();
    await page.getByRole('alert').filter({ hasText: 'was found in public' }).waitFor();
    assertClean();
  });

  it('a key can be generated, copied and dismissed with the keyboard alone', async () => {
    const { page, assertClean } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('keyboard'));
    await page.goto('/keys');
    await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
    await page.getByText('No keys yet').waitFor();

    const focused = () => page.evaluate('document.activeElement && (document.activeElement.getAttribute("aria-label") || document.activeElement.textContent || "").trim()');
    // Tab from the top of the page until "Generate New Key" has the focus.
    for (let presses = 0; presses < 20 && (await focused()) !== 'Generate New Key'; presses++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('Generate New Key');
    expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');
    await page.keyboard.press('Enter');

    const naming = page.getByRole('dialog', { name: 'Generate a new API key' });
    await naming.waitFor();
    // The dialog puts the focus in its name field.
    expect(await page.evaluate('document.activeElement.id')).toBe(await naming.getByLabel('Key name').getAttribute('id'));
    await page.keyboard.type('ci runner');
    await page.keyboard.press('Enter');

    const created = page.getByRole('dialog', { name: 'Your new API key' });
    await created.waitFor();
    const secret = (await created.getByTestId('new-key-secret').textContent()) ?? '';
    expect(await focused()).toBe('Copy API key');
    await page.keyboard.press('Enter');
    await created.getByRole('button', { name: 'Copied API key' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Done');
    await page.keyboard.press('Enter');
    await created.waitFor({ state: 'hidden' });
    // Focus is back where the customer was.
    expect(await focused()).toBe('Generate New Key');
    await page.getByRole('row', { name: /ci runner/ }).waitFor();

    // Escape closes a dialog too.
    await page.keyboard.press('Enter');
    await naming.waitFor();
    await page.keyboard.press('Escape');
    await naming.waitFor({ state: 'hidden' });
    assertClean();
  });
});
