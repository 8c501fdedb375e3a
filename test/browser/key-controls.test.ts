// A key's limits in Chromium: generated in the dashboard with a model limit, the key is
// refused (openai client) for another model, and the request log says why; then the key's
// limits are edited and the next request passes.
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
