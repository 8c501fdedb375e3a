// Sign-in with OpenID Connect against a real provider on loopback (oidc-provider): the
// account made, found by subject, or linked by verified address; the session it gets is
// the password sign-in's; and every way the flow can be wrong (state, nonce, PKCE, the
// domain, an unverified address, a declined consent) lands on the sign-in page refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditsToMicros } from '../../src/money.js';
import { OIDC_FLOW_COOKIE, OidcFlowSeal } from '../../src/web-session/oidc-flow-cookie.js';
import { hashSessionToken, SESSION_COOKIE } from '../../src/web-session/sessions.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { CookieJar, listenOidcProvider, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, signInAt, type TestProvider } from '../helpers/oidc-provider.js';

const SECRET_ENV = 'LMGATE_TEST_OIDC_CLIENT_SECRET';
const CALLBACK_PATH = '/api/dashboard/sign-in/oidc/callback';

let idp: TestProvider;
let t: TestApp;
/** Sign-up closed and no domains named: nobody new gets an account through the provider. On PostgreSQL. */
let closed: TestApp;
let people = 0;
/** The organisation newcomers on `t` join at their first sign-in. */
let orgId: string;

beforeAll(async () => {
  process.env[SECRET_ENV] = OIDC_CLIENT_SECRET;
  idp = await listenOidcProvider();
  const oidc = { issuer: idp.issuer, client_id: OIDC_CLIENT_ID, client_secret_env: SECRET_ENV };
  t = await startApp({ overrides: { auth: { oidc: { ...oidc, allowed_domains: ['Example.test'], button_label: 'Sign in with Acme', first_sign_in: { org: 'sso-acme', role: 'billing' } } } } });
  const { account: owner } = await t.createAccount();
  orgId = (await t.app.commands.orgs.create('sso-acme', owner, 'free')).id;
  closed = await startApp({ database: 'postgres', overrides: { auth: { oidc }, signup: { open: false, per_address_per_hour: 10_000 } } });
  idp.start(`${t.origin}${CALLBACK_PATH}`, `${closed.origin}${CALLBACK_PATH}`);
});
afterAll(async () => {
  await t?.close();
  await closed?.close();
  await idp?.close();
});

/** A person at the provider; their login is their subject. */
function person(email = `sso${++people}-${process.pid}@example.test`, extra: { email_verified?: boolean; name?: string } = {}): { login: string; email: string } {
  const login = `subject-${++people}-${process.pid}`;
  idp.people.set(login, { email, email_verified: true, ...extra });
  return { login, email };
}

interface Started {
  jar: CookieJar;
  authorizationUrl: URL;
}

async function begin(app: TestApp, next?: string): Promise<Started> {
  const jar = new CookieJar();
  const res = await fetch(`${app.origin}/api/dashboard/sign-in/oidc${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  jar.take(res);
  return { jar, authorizationUrl: new URL(res.headers.get('location')!) };
}

/** Back at lmgate's callback with what the browser holds; the answer is a redirect. */
async function callback(app: TestApp, jar: CookieJar, url: URL): Promise<{ status: number; location: URL }> {
  const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(res);
  return { status: res.status, location: new URL(res.headers.get('location') ?? '', app.origin) };
}

async function signInWithSso(app: TestApp, login: string, next?: string): Promise<{ jar: CookieJar; status: number; location: URL }> {
  const { jar, authorizationUrl } = await begin(app, next);
  const back = await signInAt(authorizationUrl.href, login, { callbackPrefix: `${app.origin}${CALLBACK_PATH}` });
  return { jar, ...(await callback(app, jar, back)) };
}

async function dashboard(app: TestApp, jar: CookieJar, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${app.origin}/api/dashboard${path}`, { ...init, headers: { cookie: jar.header(), ...init.headers } });
}

function refusal(location: URL): string | null {
  expect(location.pathname).toBe('/signin');
  return location.searchParams.get('sso_error');
}

describe('the first sign-in', () => {
  it('the public config shows the button with its label', async () => {
    const res = await dashboard(t, new CookieJar(), '/config');
    expect((await jsonOf(res)).sso).toEqual({ label: 'Sign in with Acme' });
  });

  it('sends the browser to the provider with PKCE (S256), state and nonce, remembered in a sealed HttpOnly cookie', async () => {
    const { jar, authorizationUrl } = await begin(t);
    expect(authorizationUrl.origin).toBe(idp.issuer);
    const params = authorizationUrl.searchParams;
    expect(params.get('client_id')).toBe(OIDC_CLIENT_ID);
    expect(params.get('redirect_uri')).toBe(`${t.origin}${CALLBACK_PATH}`);
    expect(params.get('response_type')).toBe('code');
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(params.get('state')).toBeTruthy();
    expect(params.get('nonce')).toBeTruthy();
    const sealed = jar.get(OIDC_FLOW_COOKIE)!;
    // Nothing of the flow can be read from the cookie.
    expect(sealed).not.toContain(params.get('state'));
    const flow = new OidcFlowSeal(OIDC_CLIENT_SECRET).open(sealed)!;
    expect(flow.state).toBe(params.get('state'));
    expect(flow.nonce).toBe(params.get('nonce'));
    const res = await fetch(`${t.origin}/api/dashboard/sign-in/oidc`, { redirect: 'manual' });
    const setCookie = res.headers.getSetCookie().find((line) => line.startsWith(`${OIDC_FLOW_COOKIE}=`))!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Path=\/api\/dashboard\/sign-in\/oidc/i);
  });

  it('makes the account, without a password, and a session that works on the dashboard like a password one', async () => {
    const { login, email } = person(undefined, { name: 'Grace Hopper' });
    const { jar, status, location } = await signInWithSso(t, login);
    expect(status).toBe(302);
    expect(location.pathname).toBe('/');
    expect(jar.get(OIDC_FLOW_COOKIE)).toBeUndefined();

    const session = await dashboard(t, jar, '/session');
    expect(session.status).toBe(200);
    const { account, csrfToken } = await jsonOf(session);
    expect(account).toMatchObject({ email, name: 'Grace Hopper' });
    expect(await t.store.findPasswordHash(account.id)).toBeUndefined();
    // The sign-up credits a password sign-up gets.
    expect(await t.store.balanceOf(account.id)).toBe(creditsToMicros(t.config.signup.credits));
    const stored = await t.store.findSession(hashSessionToken(jar.get(SESSION_COOKIE)!));
    expect(stored).toMatchObject({ accountId: account.id, authMethod: 'oidc' });
    expect(await t.store.findOidcIdentity(idp.issuer, login)).toMatchObject({ accountId: account.id, email });
    // auth.oidc.first_sign_in: the newcomer joined the organisation with its role.
    expect((await t.store.findMembership(orgId, account.id))?.role).toBe('billing');

    // A state change needs the session's CSRF token, as for a password session.
    const refused = await dashboard(t, jar, '/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'k' }) });
    expect(refused.status).toBe(403);
    const created = await dashboard(t, jar, '/keys', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken }, body: JSON.stringify({ name: 'k' }) });
    expect(created.status).toBe(201);
    const keys = await dashboard(t, jar, '/keys');
    expect((await jsonOf(keys)).keys).toHaveLength(1);
  });

  it('lands on the page the sign-in was started for, and only on a page of this site', async () => {
    const { login } = person();
    expect((await signInWithSso(t, login, '/admin/accounts?page=2')).location.href).toBe(`${t.origin}/admin/accounts?page=2`);
    expect((await signInWithSso(t, login, '//evil.example/steal')).location.href).toBe(`${t.origin}/`);
  });
});

describe('later sign-ins', () => {
  it('find the same account by subject, even after the address changed at the provider', async () => {
    const { login, email } = person();
    const first = await signInWithSso(t, login);
    const { account } = await jsonOf(await dashboard(t, first.jar, '/session'));
    const newEmail = `renamed-${email}`;
    idp.people.set(login, { email: newEmail, email_verified: true });
    const second = await signInWithSso(t, login);
    expect(second.location.pathname).toBe('/');
    expect((await jsonOf(await dashboard(t, second.jar, '/session'))).account.id).toBe(account.id);
    expect(await t.store.findOidcIdentity(idp.issuer, login)).toMatchObject({ accountId: account.id, email: newEmail });
  });

  it('link an account made with a password to the identity by its verified address; the password still works', async () => {
    const email = `password-${process.pid}@example.test`;
    const existing = await t.app.commands.accounts.signUp({ email, name: null, tier: 'free', passwordHash: await hashPassword('a long enough password'), creditsMicros: 0 });
    const { login } = person(email);
    const { jar, location } = await signInWithSso(t, login);
    expect(location.pathname).toBe('/');
    expect((await jsonOf(await dashboard(t, jar, '/session'))).account.id).toBe(existing.id);
    expect(await t.store.findOidcIdentity(idp.issuer, login)).toMatchObject({ accountId: existing.id });
    // Only an account made at the sign-in joins: an existing one keeps the memberships it has.
    expect(await t.store.findMembership(orgId, existing.id)).toBeUndefined();
    const password = await fetch(`${t.origin}/api/dashboard/signin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'a long enough password' }) });
    expect(password.status).toBe(200);
  });

  it('another person the provider gives a linked address to does not get into its account', async () => {
    const { login, email } = person();
    await signInWithSso(t, login);
    const newcomer = person(email);
    const { jar, location } = await signInWithSso(t, newcomer.login);
    expect(refusal(location)).toBe('taken');
    expect(jar.get(SESSION_COOKIE)).toBeUndefined();
  });
});

describe('refusals land on the sign-in page', () => {
  it('an address outside the allowed domains', async () => {
    const { login } = person(`someone-${process.pid}@other.example`);
    const { jar, location } = await signInWithSso(t, login);
    expect(refusal(location)).toBe('domain');
    expect(jar.get(SESSION_COOKIE)).toBeUndefined();
    expect(await t.store.findAccount(`someone-${process.pid}@other.example`)).toBeUndefined();
  });

  it('an address the provider has not verified', async () => {
    const { login, email } = person(undefined, { email_verified: false });
    const { location } = await signInWithSso(t, login);
    expect(refusal(location)).toBe('unverified');
    expect(await t.store.findAccount(email)).toBeUndefined();
  });

  it('a consent the person declined at the provider', async () => {
    const { login } = person();
    const { jar, authorizationUrl } = await begin(t);
    const back = await signInAt(authorizationUrl.href, login, { decline: true, callbackPrefix: `${t.origin}${CALLBACK_PATH}` });
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(refusal((await callback(t, jar, back)).location)).toBe('denied');
  });

  it('a state that is not the one this browser was sent with', async () => {
    const { login } = person();
    const { jar, authorizationUrl } = await begin(t);
    const back = await signInAt(authorizationUrl.href, login, { callbackPrefix: `${t.origin}${CALLBACK_PATH}` });
    back.searchParams.set('state', `${back.searchParams.get('state')}x`);
    const { location } = await callback(t, jar, back);
    expect(refusal(location)).toBe('state');
    expect(jar.get(SESSION_COOKIE)).toBeUndefined();
  });

  it('a return without the flow cookie, or with an altered one, and a callback used twice', async () => {
    const { login } = person();
    const { jar, authorizationUrl } = await begin(t);
    const back = await signInAt(authorizationUrl.href, login, { callbackPrefix: `${t.origin}${CALLBACK_PATH}` });
    expect(refusal((await callback(t, new CookieJar(), back)).location)).toBe('expired');
    const altered = new CookieJar();
    const sealed = jar.get(OIDC_FLOW_COOKIE)!;
    altered.set(OIDC_FLOW_COOKIE, `${sealed.slice(0, -4)}${sealed.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`);
    expect(refusal((await callback(t, altered, back)).location)).toBe('expired');
    // The real one signs in once; its cookie is gone after.
    expect((await callback(t, jar, back)).location.pathname).toBe('/');
    expect(refusal((await callback(t, jar, back)).location)).toBe('expired');
  });

  it('an ID token whose nonce is not the flow\'s', async () => {
    const { login, email } = person();
    const { jar, authorizationUrl } = await begin(t);
    const back = await signInAt(authorizationUrl.href, login, { callbackPrefix: `${t.origin}${CALLBACK_PATH}` });
    const seal = new OidcFlowSeal(OIDC_CLIENT_SECRET);
    const flow = seal.open(jar.get(OIDC_FLOW_COOKIE))!;
    jar.set(OIDC_FLOW_COOKIE, seal.seal({ ...flow, nonce: `${flow.nonce}-other` }));
    expect(refusal((await callback(t, jar, back)).location)).toBe('failed');
    expect(await t.store.findAccount(email)).toBeUndefined();
  });

  it('a code exchanged without its PKCE verifier is refused by the provider', async () => {
    const { login, email } = person();
    const { jar, authorizationUrl } = await begin(t);
    // The provider requires PKCE, so every sign-in that succeeds here used it.
    const withoutChallenge = new URL(authorizationUrl);
    withoutChallenge.searchParams.delete('code_challenge');
    withoutChallenge.searchParams.delete('code_challenge_method');
    const refusedRequest = await fetch(withoutChallenge, { redirect: 'manual' });
    expect(new URL(refusedRequest.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');

    const back = await signInAt(authorizationUrl.href, login, { callbackPrefix: `${t.origin}${CALLBACK_PATH}` });
    const seal = new OidcFlowSeal(OIDC_CLIENT_SECRET);
    const flow = seal.open(jar.get(OIDC_FLOW_COOKIE))!;
    jar.set(OIDC_FLOW_COOKIE, seal.seal({ ...flow, codeVerifier: 'x'.repeat(43) }));
    expect(refusal((await callback(t, jar, back)).location)).toBe('failed');
    expect(await t.store.findAccount(email)).toBeUndefined();
  });

  it('a newcomer when sign-up is closed and no domains are named; an existing account still signs in', async () => {
    const { login, email } = person();
    const { location } = await signInWithSso(closed, login);
    expect(refusal(location)).toBe('no_account');
    expect(await closed.store.findAccount(email)).toBeUndefined();
    const { account } = await closed.createAccount({ email });
    const again = await signInWithSso(closed, login);
    expect(again.location.pathname).toBe('/');
    expect((await jsonOf(await dashboard(closed, again.jar, '/session'))).account.id).toBe(account.id);
    expect(await closed.store.findSession(hashSessionToken(again.jar.get(SESSION_COOKIE)!))).toMatchObject({ accountId: account.id, authMethod: 'oidc' });
  });

  it('the refusal keeps the page the sign-in was for', async () => {
    const { login } = person(`x-${process.pid}@other.example`);
    const { location } = await signInWithSso(t, login, '/admin');
    expect(refusal(location)).toBe('domain');
    expect(location.searchParams.get('next')).toBe('/admin');
  });
});

it('a provider that cannot be reached sends the browser back to the sign-in page, not to an error', async () => {
  const unreachable = await startApp({ overrides: { auth: { oidc: { issuer: 'http://127.0.0.1:1', client_id: OIDC_CLIENT_ID, client_secret_env: SECRET_ENV } } } });
  try {
    const res = await fetch(`${unreachable.origin}/api/dashboard/sign-in/oidc?next=%2Fkeys`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!, unreachable.origin);
    expect(refusal(location)).toBe('failed');
    expect(location.searchParams.get('next')).toBe('/keys');
  } finally {
    await unreachable.close();
  }
});
