// The Webhooks page in Chromium: an endpoint added with its signing secret shown once, a
// test event that a real endpoint on loopback receives and verifies with that secret (the
// standardwebhooks package), its deliveries with every attempt, "Send again" with the same
// webhook-id, and a rotation; the page fits a desktop and a phone.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { verified } from '../webhooks/webhook-fixture.js';
import { DESKTOP, launchBrowser, openPage, PHONE } from './browser.js';
import { signUp, uniqueEmail } from './dashboard.js';

// Strings, not functions: this file is compiled without the DOM's types.
const SCROLLS_SIDEWAYS = 'document.documentElement.scrollWidth > window.innerWidth';
const NAV_UNDER_ACCOUNT_MENU = `(() => {
  const account = document.querySelector('.account-menu')?.getBoundingClientRect();
  const links = [...document.querySelectorAll('.nav a')].map((link) => link.getBoundingClientRect()).filter((rect) => rect.width > 0);
  return Boolean(account && links.some((rect) => rect.right > account.left && rect.top < account.bottom && rect.bottom > account.top));
})()`;

let browser: Browser;
let t: TestApp;
let receiver: WebhookReceiver;
beforeAll(async () => {
  browser = await launchBrowser();
  // Retried every 200 ms and given up after a second: a failing delivery ends within the test.
  t = await startApp({ webhooks: { allowPrivateAddresses: true, pollMs: 50, schedule: { delaysMs: [200], maxAgeMs: 1_000 } } });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
});

describe('the Webhooks page', () => {
  it('adds an endpoint, shows its secret once, sends a test event, lists attempts and sends one again', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin, DESKTOP);
    await signUp(page, uniqueEmail('hooks'));
    // Under Settings: the top bar keeps its pages.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Manage webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoints yet').waitFor();
    expect(await page.evaluate(NAV_UNDER_ACCOUNT_MENU)).toBe(false);

    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const adding = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await adding.getByLabel('Endpoint URL').fill(receiver.url);
    await adding.getByRole('checkbox', { name: /key\.revoked/ }).check();
    await adding.getByRole('checkbox', { name: /payment\.failed/ }).check();
    await screenshot('webhooks-add');
    await adding.getByRole('button', { name: 'Add endpoint' }).click();
    const shown = page.getByRole('dialog', { name: 'Your signing secret' });
    const secret = (await shown.getByTestId('new-webhook-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await shown.getByRole('button', { name: /Copy signing secret/ }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await shown.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('heading', { level: 2, name: receiver.url }).waitFor();
    // Shown once: the page holds it no more.
    expect(await page.content()).not.toContain(secret);

    receiver.answer(() => 503);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/A webhook.test event \(msg_\w+\) is on its way/).waitFor();
    await receiver.waitFor(1);
    expect(verified(secret, receiver.received[0]!).type).toBe('webhook.test');
    const [delivery] = await t.store.listWebhookDeliveries((await t.store.listWebhookEndpoints(await accountIdOf(t, receiver.url)))[0]!.id);
    await expect.poll(async () => (await t.store.findWebhookDelivery(delivery!.id))?.status).toBe('failed');
    const tried = receiver.received.length;
    await page.getByRole('button', { name: 'Refresh' }).click();
    const row = page.getByRole('row', { name: /webhook\.test/ });
    await row.getByText('Failed').waitFor();
    await row.getByText(String(tried), { exact: true }).click();
    await row.getByText(/HTTP 503 in \d+ ms/).first().waitFor();
    await screenshot('webhooks-deliveries');

    receiver.answer(() => 200);
    await row.getByRole('button', { name: /^Send again/ }).click();
    await page.getByText(/will be sent again, with the same webhook-id/).waitFor();
    await receiver.waitFor(tried + 1);
    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByRole('dialog', { name: 'Your signing secret' }).getByTestId('new-webhook-secret').textContent()) ?? '';
    expect(rotated).not.toBe(secret);
    await page.getByRole('dialog', { name: 'Your signing secret' }).getByRole('button', { name: 'Done' }).click();
    await page.getByText(/previous secret still signs beside the new one/).waitFor();
    expect(await page.evaluate(SCROLLS_SIDEWAYS)).toBe(false);
    assertClean();
  });

  it('fits a phone', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin, PHONE);
    await signUp(page, uniqueEmail('hooks-phone'));
    await page.goto('/settings/webhooks');
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const adding = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await adding.getByLabel('Endpoint URL').fill(`${receiver.url}/a/rather/long/path/for/a/small/screen`);
    await adding.getByRole('checkbox', { name: /balance\.low/ }).check();
    await adding.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('dialog', { name: 'Your signing secret' }).getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.getByText('Nothing sent yet.').waitFor();
    expect(await page.evaluate(SCROLLS_SIDEWAYS)).toBe(false);
    await screenshot('webhooks-phone');
    assertClean();
  });
});

/** The account whose endpoint posts to `url`. */
async function accountIdOf(t: TestApp, url: string): Promise<string> {
  for (const account of await t.store.listAccounts()) {
    if ((await t.store.listWebhookEndpoints(account.id)).some((endpoint) => endpoint.url === url)) return account.id;
  }
  throw new Error(`no endpoint ${url}`);
}
