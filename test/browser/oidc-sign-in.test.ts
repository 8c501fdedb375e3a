// Signing in with the operator's identity provider in Chromium: the button on the sign-in
// page, the provider's own login and consent pages (oidc-provider on loopback), and the
// way back, signed in, to the dashboard, or to the console for an operator. A refusal
// comes back to the sign-in page in words.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { listenOidcProvider, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, type TestProvider } from '../helpers/oidc-provider.js';
import { launchBrowser, openPage, type GuardedPage } from './browser.js';
import { bodyText, uniqueEmail } from './dashboard.js';

const SECRET_ENV = 'LMGATE_TEST_OIDC_CLIENT_SECRET';
const SSO_ORG = 'Single Sign-On Team';

let browser: Browser;
let idp: TestProvider;
let t: TestApp;

beforeAll(async () => {
  browser = await launchBrowser();
  process.env[SECRET_ENV] = OIDC_CLIENT_SECRET;
  idp = await listenOidcProvider();
  // A first sign-in joins SSO_ORG (made by the last test; before it, there is none to join).
  t = await startApp({
    overrides: { auth: { oidc: { issuer: idp.issuer, client_id: OIDC_CLIENT_ID, client_secret_env: SECRET_ENV, allowed_domains: ['example.test'], first_sign_in: { org: SSO_ORG, role: 'member' } } } },
  });
  idp.start(`${t.origin}/api/dashboard/sign-in/oidc/callback`);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await idp?.close();
});

async function openGuardedPage(): Promise<GuardedPage> {
  const guarded = await openPage(browser, t.origin);
  // The provider's development pages ask for a favicon it does not have and a web font
  // from the internet, which a test machine cannot reach: neither is lmgate's.
  await guarded.context.route(`${idp.issuer}/favicon.ico`, (route) => route.fulfill({ status: 204 }));
  await guarded.context.route('https://fonts.googleapis.com/**', (route) => route.fulfill({ status: 200, contentType: 'text/css', body: '' }));
  return guarded;
}

/** At the provider: its login form, then its consent page. */
async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.waitForURL(`${idp.issuer}/**`);
  await page.getByPlaceholder('Enter any login').fill(login);
  await page.getByPlaceholder('and password').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

it('a newcomer clicks "Sign in with SSO", signs in at the provider and lands signed in on the dashboard', async () => {
  const { page, assertClean, screenshot } = await openGuardedPage();
  const email = uniqueEmail('sso-newcomer');
  idp.people.set('sso-newcomer', { email, email_verified: true, name: 'Ada Lovelace' });

  await page.goto('/');
  await page.waitForURL('**/signin');
  await screenshot('signin-with-sso');
  await page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await signInAtProvider(page, 'sso-newcomer');

  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  expect(new URL(page.url()).href).toBe(`${t.origin}/`);
  await page.getByTestId('balance').waitFor();
  await page.getByText(`Signed in as ${email}`).first().waitFor();
  // The session is a dashboard session like any: the keys page works.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API Keys' }).click();
  await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();
  assertClean();
});

it('an operator signs in to the console the same way', async () => {
  const { page, assertClean } = await openGuardedPage();
  const email = uniqueEmail('sso-operator');
  const { account } = await t.createAccount({ email });
  await t.app.commands.accounts.setRole(account.id, 'operator', { kind: 'cli', id: 'test' });
  idp.people.set('sso-operator', { email, email_verified: true });

  await page.goto('/admin');
  await page.waitForURL('**/signin?next=%2Fadmin');
  await page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await signInAtProvider(page, 'sso-operator');
  await page.waitForURL(`${t.origin}/admin`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Accounts' }).waitFor();
  assertClean();
});

it('an address outside the allowed domains comes back to the sign-in page with the reason', async () => {
  const { page, assertClean, screenshot } = await openGuardedPage();
  idp.people.set('sso-outsider', { email: 'outsider@elsewhere.example', email_verified: true });

  await page.goto('/signin');
  await page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await signInAtProvider(page, 'sso-outsider');
  await page.waitForURL('**/signin?sso_error=domain');
  await page.getByRole('alert').getByText('Accounts with this email domain cannot sign in here.', { exact: false }).waitFor();
  await screenshot('signin-sso-refused');
  assertClean();
});

it('a first sign-in lands in the configured organisation, as its member', async () => {
  const { account: owner } = await t.createAccount({ email: uniqueEmail('sso-org-owner') });
  const org = await t.app.commands.orgs.create(SSO_ORG, owner, t.config.default_tier);
  const { page, assertClean } = await openGuardedPage();
  const email = uniqueEmail('sso-joiner');
  idp.people.set('sso-joiner', { email, email_verified: true });

  await page.goto('/signin');
  await page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await signInAtProvider(page, 'sso-joiner');
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  await page.getByText(`Working in ${SSO_ORG}`).waitFor();
  expect(await bodyText(page)).not.toContain('@org.invalid');
  const joiner = (await t.store.findAccount(email))!;
  expect(await t.store.findMembership(org.id, joiner.id)).toMatchObject({ role: 'member' });
  assertClean();
});
