// A key's limits in Chromium: generated in the dashboard with a model limit, the key is
// refused (openai client) for another model, and the request log says why; then the key's
// limits are edited and the next request passes. A credit limit set in the dialog is shown
// with what the key spent against it, refuses what would pass it, and is cleared by an edit.
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCredits } from '../../web/src/format.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage } from './browser.js';
import { signUp, uniqueEmail } from './dashboard.js';

const HI = [{ role: 'user' as const, content: 'hi' }];

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp({ overrides: { signup: { credits: 5 } } });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('key limits', () => {
  it('a key limited to one model is refused for another, the log shows why, and an edit lifts the limit', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('limiter'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();

    await page.getByRole('button', { name: 'Generate New Key' }).click();
    const naming = page.getByRole('dialog', { name: 'Generate a new API key' });
    await naming.getByLabel('Key name').fill('echo only');
    await naming.getByLabel('Allowed models').fill('demo-echo');
    await naming.getByLabel('Allowed IP addresses').fill('10.0.0.0/40');
    await naming.getByRole('button', { name: 'Generate key' }).click();
    // The server's field message, under its field.
    await naming.getByText('“10.0.0.0/40” is not an IP address or CIDR range.').waitFor();
    await naming.getByLabel('Allowed IP addresses').fill('');
    await screenshot('keys-generate-limits');
    await naming.getByRole('button', { name: 'Generate key' }).click();
    const created = page.getByRole('dialog', { name: 'Your new API key' });
    const secret = (await created.getByTestId('new-key-secret').textContent()) ?? '';
    await created.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /echo only/ });
    expect(await row.innerText()).toContain('Models: demo-echo');

    const client = t.client(secret);
    await client.chat.completions.create({ model: 'demo-echo', messages: HI });
    const refused = await client.chat.completions.create({ model: 'demo-lorem', messages: HI, max_tokens: 4 }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ reason: 'key_model_not_allowed' });
    await Promise.all([t.flushUsage(), t.app.refusals.flush()]);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Requests' }).click();
    await page.getByRole('heading', { level: 1, name: 'Request log' }).waitFor();
    const refusedRow = page.getByTestId('request-log').getByRole('row', { name: /demo-lorem/ });
    await refusedRow.waitFor();
    expect(await refusedRow.innerText()).toMatch(/echo only\s+demo-lorem\s+403 Model not allowed for this key/);
    await screenshot('request-log-key-limit');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
    await page.getByRole('button', { name: 'Edit echo only' }).click();
    const editing = page.getByRole('dialog', { name: 'Edit API key' });
    expect(await editing.getByLabel('Allowed models').inputValue()).toBe('demo-echo');
    await editing.getByLabel('Allowed models').fill('demo-*');
    await editing.getByLabel('Key name').fill('demos');
    await screenshot('keys-edit');
    await editing.getByRole('button', { name: 'Save' }).click();
    await editing.waitFor({ state: 'hidden' });
    expect(await page.getByRole('row', { name: /demos/ }).innerText()).toContain('Models: demo-*');
    await client.chat.completions.create({ model: 'demo-lorem', messages: HI, max_tokens: 4 });
    assertClean();
  });

  it('a credit limit set in the dialog is shown with what the key spent, refuses a request that could pass it, and an edit clears it', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('budget'));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
    await page.getByRole('button', { name: 'Generate New Key' }).click();
    const naming = page.getByRole('dialog', { name: 'Generate a new API key' });
    await naming.getByLabel('Key name').fill('budget');
    await naming.getByLabel('Credit limit', { exact: true }).fill('a lot');
    await naming.getByRole('button', { name: 'Generate key' }).click();
    await naming.getByText('Give an amount of credits, like 5 or 0.25 (at most 6 decimals).').waitFor();
    await naming.getByLabel('Credit limit', { exact: true }).fill('0.01');
    expect(await naming.getByLabel('Credit limit applies').inputValue()).toBe('month');
    await screenshot('keys-generate-credit-limit');
    await naming.getByRole('button', { name: 'Generate key' }).click();
    const created = page.getByRole('dialog', { name: 'Your new API key' });
    const secret = (await created.getByTestId('new-key-secret').textContent()) ?? '';
    await created.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /budget/ });
    expect(await row.innerText()).toContain('Credits: 0.00 of 0.01 spent this month (UTC)');

    // A short answer fits; one that may write the model's longest answer could pass the limit.
    const client = t.client(secret);
    const answer = await client.chat.completions.create({ model: 'demo-echo', messages: HI, max_tokens: 4 });
    const spent = Math.round((answer.usage as OpenAI.CompletionUsage & { cost: number }).cost * 1_000_000);
    expect(spent).toBeGreaterThan(0);
    const refused = await client.chat.completions.create({ model: 'demo-echo', messages: HI }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((refused as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ reason: 'key_credit_limit' });

    await page.reload();
    await page.getByRole('row', { name: /budget/ }).getByText(`Credits: ${formatCredits(spent)} of 0.01 spent this month (UTC)`).waitFor();
    await screenshot('keys-credit-limit-spent');
    await t.app.refusals.flush();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Requests' }).click();
    const refusedRow = page.getByTestId('request-log').getByRole('row', { name: /402/ });
    await refusedRow.waitFor();
    expect(await refusedRow.innerText()).toMatch(/budget\s+demo-echo\s+402 Key’s credit limit reached/);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
    await page.getByRole('button', { name: 'Edit budget' }).click();
    const editing = page.getByRole('dialog', { name: 'Edit API key' });
    expect(await editing.getByLabel('Credit limit', { exact: true }).inputValue()).toBe('0.01');
    await editing.getByLabel('Credit limit', { exact: true }).fill('');
    await editing.getByRole('button', { name: 'Save' }).click();
    await editing.waitFor({ state: 'hidden' });
    expect(await page.getByRole('row', { name: /budget/ }).innerText()).not.toContain('Credits:');
    await client.chat.completions.create({ model: 'demo-echo', messages: HI });
    assertClean();
  });
});
