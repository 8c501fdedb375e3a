// Debian's Chromium driven by playwright-core, with a guard on every page: any CSP
// violation, script error, console error or failed page asset fails the test that
// caused it. Screenshots go to test/browser/screenshots/ (not committed).
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect, onTestFinished } from 'vitest';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS_DIR = fileURLToPath(new URL('./screenshots/', import.meta.url));
const BUILT_APP = fileURLToPath(new URL('../../web/dist/index.html', import.meta.url));

export const PHONE = { width: 375, height: 812 } as const;
export const DESKTOP = { width: 1280, height: 860 } as const;

// Chrome logs every 4xx answer to fetch as a console error; the dashboard gets 401 (no
// session yet, a wrong password), 403, 404, 409, 410, 422 and 429 by design and shows them.
const EXPECTED_HTTP_ERROR = /^Failed to load resource: the server responded with a status of 4\d\d/;

export interface GuardedPage {
  page: Page;
  context: BrowserContext;
  /** Fails the test if anything went wrong in the page so far. */
  assertClean(): void;
  screenshot(name: string): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(BUILT_APP)) throw new Error('web/dist is missing: run `npm run build` (npm test builds it first)');
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}

/** A fresh browser context and page for the current test, closed when the test ends. */
export async function openPage(browser: Browser, origin: string, viewport: { width: number; height: number } = DESKTOP): Promise<GuardedPage> {
  const context = await browser.newContext({
    baseURL: origin,
    viewport,
    locale: 'en-US',
    timezoneId: 'UTC',
    // Charts drawn at once, so screenshots show them whole.
    reducedMotion: 'reduce',
    ...(viewport.width < 500 ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  // Closed with its test: Chromium keeps spare connections open, and a server being
  // closed would wait for them (up to its headers timeout) before it lets go.
  onTestFinished(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];

  await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`CSP violation: ${text}`));
  // A string, not a function: this file is compiled without the DOM's types.
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (event) =>
    window.reportCspViolation(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline')));`);
  page.on('console', (message) => {
    if (message.type() === 'error' && !EXPECTED_HTTP_ERROR.test(message.text())) problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    const path = new URL(response.url()).pathname;
    // The API's 4xx answers are part of the flows, and so is the 404 of an address outside
    // the app typed into the browser (the app shows its not-found page); a page's asset or
    // a known page must never fail.
    const pageNotFound = response.status() === 404 && response.request().isNavigationRequest();
    if (response.status() >= 500 || (response.status() >= 400 && !path.startsWith('/api/') && !pageNotFound)) {
      problems.push(`HTTP ${response.status()} for ${response.request().method()} ${path}`);
    }
  });

  return {
    page,
    context,
    assertClean() {
      expect(problems).toEqual([]);
    },
    async screenshot(name) {
      mkdirSync(SCREENSHOTS_DIR, { recursive: true });
      await page.screenshot({ path: `${SCREENSHOTS_DIR}${name}.png`, fullPage: true });
    },
  };
}
