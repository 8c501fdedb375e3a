// The main pages on a phone-sized screen (375×812): everything fits the width (no
// sideways scrolling of the page), and each page is saved for a look.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage, PHONE } from './browser.js';
import { signUp, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
beforeAll(async () => {
  browser = await launchBrowser();
  t = await startApp({ overrides: { signup: { credits: 3 } } });
});
afterAll(async () => {
  await browser.close();
  await t.close();
});

async function pageWidth(page: Page): Promise<{ content: number; viewport: number }> {
  return (await page.evaluate('({ content: document.documentElement.scrollWidth, viewport: window.innerWidth })')) as {
    content: number;
    viewport: number;
  };
}

describe('on a phone', () => {
  it('every main page fits a 375-pixel-wide screen', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin, PHONE);
    await page.goto('/signin');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await screenshot('phone-signin');
    await signUp(page, uniqueEmail('pocket'));

    // A key and a request, so the tables and charts have rows to lay out.
    await page.goto('/keys');
    await page.getByRole('button', { name: 'Generate New Key' }).click();
    await page.getByLabel('Key name').fill('phone');
    await page.getByRole('button', { name: 'Generate key' }).click();
    const secret = (await page.getByTestId('new-key-secret').textContent()) ?? '';
    await screenshot('phone-keys-secret');
    await page.getByRole('button', { name: 'Done' }).click();
    await t.client(secret).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'From my phone' }] });
    await t.flushUsage();

    const pages = [
      { path: '/', heading: 'Overview', ready: page.getByTestId('balance') },
      { path: '/keys', heading: 'API Keys', ready: page.getByRole('row', { name: /phone/ }) },
      { path: '/usage', heading: 'Usage', ready: page.getByTestId('recent-requests') },
      { path: '/models', heading: 'Models', ready: page.getByRole('row', { name: /demo-echo/ }) },
      { path: '/billing/plans', heading: 'Billing', ready: page.getByTestId('ledger') },
      { path: '/settings', heading: 'Settings', ready: page.getByLabel('Current password') },
    ];
    for (const { path, heading, ready } of pages) {
      await page.goto(path);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await ready.waitFor();
      const { content, viewport } = await pageWidth(page);
      expect(viewport, path).toBe(PHONE.width);
      expect(content, path).toBeLessThanOrEqual(PHONE.width);
      await screenshot(`phone-${heading.toLowerCase().replace(/\s+/g, '-')}`);
      assertClean();
    }

    // Every page is reachable from the Menu button, which closes once a page is chosen.
    const menu = page.getByRole('button', { name: 'Menu' });
    const nav = page.getByRole('navigation', { name: 'Main' });
    await page.goto('/');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(await nav.isVisible()).toBe(false);
    for (const { path, heading } of [...pages.slice(1), pages[0]!]) {
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      if (path === '/settings') await screenshot('phone-menu');
      await nav.getByRole('link', { name: heading, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      expect(new URL(page.url()).pathname).toBe(path);
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await nav.isVisible()).toBe(false);
    }
    // Escape closes it and gives the focus back to the button.
    await menu.click();
    await nav.getByRole('link', { name: 'Usage' }).focus();
    await page.keyboard.press('Escape');
    expect(await nav.isVisible()).toBe(false);
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Menu');
    assertClean();
  });

  it('on a desktop the pages are in the bar, with no menu button', async () => {
    const { page, assertClean } = await openPage(browser, t.origin);
    await signUp(page, uniqueEmail('desk'));
    expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    assertClean();
  });
});
