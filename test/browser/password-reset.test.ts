// A customer who forgot their password, in Chromium: "Forgot password?" on the sign-in
// page, the mail through a real SMTP server on loopback, the link, a new password, and
// signing in with it. Also: a new sign-up's first call works on its trial credits.
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp-inbox.js';
import { launchBrowser, openPage, PHONE } from './browser.js';
import { PASSWORD, signIn, signUp, uniqueEmail } from './dashboard.js';

const NEW_PASSWORD = 'staple paper clip moon';

let browser: Browser;
let t: TestApp;
let inbox: SmtpInbox;

beforeAll(async () => {
  browser = await launchBrowser();
  inbox = await startSmtpInbox();
  // Default signup.credits: the trial balance a new account starts with.
  t = await startApp({
    overrides: {
      server: { port: 0, public_url: 'https://dash.example.test' },
      smtp: { host: '127.0.0.1', port: inbox.port, from: 'lmgate <no-reply@example.test>' },
    },
  });
});
afterAll(async () => {
  await t.close();
  await inbox.close();
  await browser.close();
});

describe('forgot password', () => {
  it('forgot password → mail → reset → sign in with the new password', async () => {
    const email = uniqueEmail('forgetful');
    const { page, assertClean, screenshot } = await openPage(browser, t.origin);
    await signUp(page, email);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/signin');

    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { level: 1, name: 'Forgot password' }).waitFor();
    await screenshot('forgot-password');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText(`If an account uses ${email}, a link is on its way there.`).waitFor();

    const mail = await inbox.next(email);
    const link = new URL(/https:\/\/\S+#token=\S+/.exec(mail.text)![0]);
    expect(link.origin).toBe('https://dash.example.test');
    // The configured address is the customer's way in; this test reaches the same app on loopback.
    await page.goto(`${link.pathname}${link.hash}`);
    await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor();
    await screenshot('reset-password');
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('New password again').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your password is set' }).waitFor();
    // The spent token leaves the address bar.
    expect(new URL(page.url()).hash).toBe('');

    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Invalid email or password.').waitFor();
    await signIn(page, email, NEW_PASSWORD);

    // The same link a second time is refused, and offers a new one.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/signin');
    await page.goto(`${link.pathname}${link.hash}`);
    await page.getByLabel('New password', { exact: true }).fill('yet another password');
    await page.getByLabel('New password again').fill('yet another password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('This link is not valid any more').waitFor();
    await page.getByRole('link', { name: 'Ask for a new link' }).waitFor();
    assertClean();
  });

  it('the reset page fits a phone and says when a link is incomplete', async () => {
    const { page, assertClean, screenshot } = await openPage(browser, t.origin, PHONE);
    await page.goto('/reset-password');
    await page.getByText('This link is incomplete.').waitFor();
    await screenshot('reset-password-incomplete-phone');
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    assertClean();
  });
});

describe('trial credits', () => {
  it('a new sign-up makes its first successful call with the trial credits', async () => {
    const email = uniqueEmail('trial');
    const { page, assertClean } = await openPage(browser, t.origin);
    await signUp(page, email);
    // The Overview's heading is drawn before its balance arrives.
    await page.getByRole('main').getByText('1.00').first().waitFor();
    await page.goto('/keys');
    await page.getByRole('button', { name: 'Generate New Key' }).click();
    const naming = page.getByRole('dialog', { name: 'Generate a new API key' });
    await naming.getByLabel('Key name').fill('first');
    await naming.getByRole('button', { name: 'Generate key' }).click();
    const secret = ((await page.getByTestId('new-key-secret').textContent()) ?? '').trim();
    expect(secret.startsWith('sk-lmg-')).toBe(true);

    const client = new OpenAI({ apiKey: secret, baseURL: t.baseURL, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'demo-lorem', messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 20 });
    expect(answer.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect((answer.usage as OpenAI.CompletionUsage & { cost: number }).cost).toBeGreaterThan(0);
    assertClean();
  });
});

describe('sign-up with email confirmation', () => {
  let confirming: TestApp;
  beforeAll(async () => {
    confirming = await startApp({
      overrides: {
        signup: { per_address_per_hour: 10_000, verify_email: true },
        smtp: { host: '127.0.0.1', port: inbox.port, from: 'lmgate <no-reply@example.test>' },
      },
    });
  });
  afterAll(() => confirming.close());

  it('create account → mail → the link signs the new account in', async () => {
    const email = uniqueEmail('confirming');
    const { page, assertClean, screenshot } = await openPage(browser, confirming.origin);
    await page.goto('/signup');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Check your mail' }).waitFor();
    await screenshot('signup-check-mail');

    const link = new URL(/https?:\/\/\S+#token=\S+/.exec((await inbox.next(email)).text)![0]);
    await page.goto(`${link.pathname}${link.hash}`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The heading renders before the account loads; the description follows it.
    await page.getByText(`Signed in as ${email}`).waitFor();
    assertClean();
  });
});
