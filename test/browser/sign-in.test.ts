// Signing up, in and out of the dashboard in Chromium: the forms, the throttle's message,
// a password change, and a session that ends under the customer's feet.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { launchBrowser, openPage } from './browser.js';
import { PASSWORD, signIn, signUp, uniqueEmail } from './dashboard.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser.close());

describe('with sign-up open', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('a visitor signs up, lands on the overview, signs out and signs back in', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    const email = uniqueEmail('newcomer');

    await page.goto('/');
    await page.waitForURL('**/signin');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await screenshot('signin');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Create your account' }).waitFor();
    await screenshot('signup');

    // The server's own validation reaches the right field.
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    // The browser would refuse it first; the server's answer is what is tested here.
    await page.getByLabel('Password').evaluate((input: { removeAttribute(name: string): void }) => input.removeAttribute('minlength'));
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Use at least 10 characters.').waitFor();
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');

    await signUp(page, email, PASSWORD, 'Ada');
    expect(new URL(page.url()).pathname).toBe('/');
    // The heading comes before the overview's data, which (with the accounts the switcher
    // lists) says who is signed in.
    await page.getByTestId('balance').waitFor();
    await page.getByText(`Signed in as ${email}`).first().waitFor();
    await screenshot('overview');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/signin');
    // Signed out for the server too: the app's pages send back to sign-in.
    await page.goto('/keys');
    await page.waitForURL('**/signin?next=%2Fkeys');

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
    assertClean();
  });

  it('the same email cannot sign up twice', async () => {
    const { page, assertClean } = await openPage(browser, t.origin);
    const email = uniqueEmail('twice');
    await signUp(page, email);
    await page.context().clearCookies();
    await page.goto('/signup');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').getByText('An account with this email already exists.').waitFor();
    assertClean();
  });

  it('wrong passwords are refused, then throttled with a message saying when to retry', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    const email = uniqueEmail('forgetful');
    await signUp(page, email);
    await page.context().clearCookies();

    await page.goto('/signin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password');
    for (let attempt = 1; attempt <= 5; attempt++) {
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').getByText('Invalid email or password.').waitFor();
      await page.getByRole('button', { name: 'Sign in' }).and(page.locator(':enabled')).waitFor();
    }
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').getByText(/Too many failed sign-in attempts/);
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/try again in about 15 minutes\.$/);
    await screenshot('signin-throttled');

    // Even the right password waits now.
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await alert.waitFor();
    expect(new URL(page.url()).pathname).toBe('/signin');
    assertClean();
  });

  it('a changed password replaces the old one, and the form says when the current one is wrong', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    const email = uniqueEmail('rotating');
    const newPassword = 'a brand new passphrase';
    await signUp(page, email);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByLabel('Current password').fill('wrong current password');
    await page.getByLabel('New password', { exact: true }).fill(newPassword);
    await page.getByLabel('Confirm new password').fill(newPassword);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').getByText('Current password is incorrect.').waitFor();
    // Still signed in: a refused change is not an ended session.
    expect(new URL(page.url()).pathname).toBe('/settings');

    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').getByText('Your password was changed.').waitFor();
    await screenshot('settings');

    await page.getByRole('main').getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/signin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('Invalid email or password.').waitFor();
    await signIn(page, email, newPassword);
    assertClean();
  });

  it('a call that finds the session gone sends the customer to sign in, and back afterwards', async () => {
    const { page, assertClean } = await openPage(browser, t.origin);
    const email = uniqueEmail('expired');
    await signUp(page, email);
    await page.context().clearCookies();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models' }).click();
    await page.waitForURL('**/signin?next=%2Fmodels');
    await page.getByText('Your session has ended. Please sign in again.').waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Models' }).waitFor();
    assertClean();
  });
});

describe('with sign-up closed', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ overrides: { signup: { open: false } } });
  });
  afterAll(() => t.close());

  it('the sign-in page offers no sign-up and the sign-up page says it is closed', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await page.goto('/signin');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0);

    await page.goto('/signup');
    await page.getByRole('heading', { level: 1, name: 'Sign-up is closed' }).waitFor();
    expect(await page.getByLabel('Email').count()).toBe(0);
    await screenshot('signup-closed');
    assertClean();
  });
});
