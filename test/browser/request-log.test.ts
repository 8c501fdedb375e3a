// The request log in Chromium: requests made with the openai client, answered and refused,
// show with their status and why, and the filters narrow them.
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage } from './browser.js';
import { signUp, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp({
    overrides: {
      signup: { credits: 5 },
      models: {
        'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 2, output: 4 } },
        'gpt-premium': { backend: 'demo', kind: 'echo', tokens_per_sec: 0 },
      },
    },
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('request log', () => {
  it('shows answered and refused requests with the reason, and filters failures', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    const email = uniqueEmail('logger');
    await signUp(page, email);
    const account = (await t.store.findAccount(email))!;
    const { secret } = await t.app.commands.keys.create(account.id, 'backend');
    const client = t.client(secret);
    await client.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hello' }] });
    const refused = await client.chat.completions.create({ model: 'gpt-premium', messages: [{ role: 'user', content: 'hello' }] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    await Promise.all([t.flushUsage(), t.app.refusals.flush()]);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Requests' }).click();
    await page.getByRole('heading', { level: 1, name: 'Request log' }).waitFor();
    const log = page.getByTestId('request-log');
    const refusedRow = log.getByRole('row', { name: /gpt-premium/ });
    await refusedRow.waitFor();
    expect(await refusedRow.innerText()).toMatch(/backend\s+gpt-premium\s+403 Model not in your plan/);
    expect(await refusedRow.innerText()).toContain((refused as InstanceType<typeof OpenAI.APIError>).requestID ?? '');
    expect(await log.getByRole('row', { name: /demo-echo/ }).innerText()).toMatch(/200/);
    await screenshot('request-log');

    await page.getByLabel('Outcome').selectOption('failed');
    await page.waitForURL(/outcome=failed/);
    await log.getByRole('row', { name: /demo-echo/ }).waitFor({ state: 'detached' });
    expect(await log.getByRole('row').count()).toBe(2); // the header and the refusal
    assertClean();
  });
});
