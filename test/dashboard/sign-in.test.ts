// Sign-up, sign-in, the session, sign-out and password change over real HTTP, with the
// cookie, CSRF and Origin rules, on SQLite and PostgreSQL.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashSessionToken } from '../../src/web-session/sessions.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { DashboardClient, expectUnifiedError, signedUpClient } from './dashboard-client.js';

const PASSWORD = 'correct horse battery';

describe.each(['sqlite', 'postgres'] as const)('dashboard sign-in on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ database });
  });
  afterAll(() => t.close());

  it('GET /config answers without a session, with the base addresses and no-store', async () => {
    const res = await new DashboardClient(t).get('/config');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ signupOpen: true, passwordResetByMail: false, verifyEmail: false, support: { email: null, url: null }, baseUrls: [`${t.origin}/v1`, `${t.origin}/api/v1`], sso: null });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('sign-up creates the account, a hashed password and a server-side session behind an httpOnly cookie', async () => {
    const client = new DashboardClient(t);
    const res = await client.post('/signup', { email: 'Ada@Example.test', password: PASSWORD, name: 'Ada' });
    expect(res.status).toBe(201);
    expect(res.body.account).toEqual({
      id: expect.stringMatching(/^acct_/),
      email: 'ada@example.test',
      name: 'Ada',
      tier: 'free',
      status: 'active',
      subscriptionStatus: 'inactive',
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      role: 'customer',
    });
    expect(res.body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const [setCookie] = res.headers.getSetCookie();
    expect(setCookie).toMatch(/^lmgate_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/; HttpOnly/i);
    expect(setCookie).toMatch(/; SameSite=Lax/i);
    expect(setCookie).toMatch(/; Path=\//);
    expect(setCookie).toMatch(/; Max-Age=2592000/);
    expect(setCookie).not.toMatch(/; Secure/i); // plain HTTP on loopback

    const token = setCookie!.split(';')[0]!.split('=')[1]!;
    const session = await t.store.findSession(hashSessionToken(token));
    expect(session).toMatchObject({ accountId: res.body.account.id, csrfToken: res.body.csrfToken });
    expect(Date.parse(session!.expiresAt) - Date.parse(session!.createdAt)).toBe(30 * 24 * 3600 * 1000);
    expect(await t.store.findPasswordHash(res.body.account.id)).toMatch(/^scrypt\$131072\$8\$1\$[^$]+\$[^$]+$/);

    const current = await client.get('/session');
    expect(current.status).toBe(200);
    expect(current.body).toEqual({ account: res.body.account, csrfToken: res.body.csrfToken });
  });

  it('sign-up with a taken email (in any case) is 409', async () => {
    await signedUpClient(t, { email: 'taken@example.test' });
    const res = await new DashboardClient(t).post('/signup', { email: 'TAKEN@example.test', password: PASSWORD });
    expectUnifiedError(res, 409, 'An account with this email already exists.');
  });

  it('sign-up with a bad email and a short password is 422 naming both fields', async () => {
    const res = await new DashboardClient(t).post('/signup', { email: 'not-an-email', password: 'short' });
    expectUnifiedError(res, 422);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['email', 'password']);
    for (const entry of res.body.errors) expect(entry.message).toEqual(expect.any(String));
    const long = await new DashboardClient(t).post('/signup', { email: 'long@example.test', password: 'x'.repeat(201) });
    expectUnifiedError(long, 422);
    expect(long.body.errors).toEqual([{ field: 'password', message: 'Use at most 200 characters.' }]);
  });

  it('sign-in works with the right pair and gives the same 401 for a wrong password, an unknown email and a password-less account', async () => {
    const owner = await signedUpClient(t, { email: 'grace@example.test' });
    const client = new DashboardClient(t);
    const ok = await client.signIn('Grace@example.test', PASSWORD);
    expect(ok.status).toBe(200);
    expect(ok.body.account.id).toBe(owner.account.id);
    expect(ok.body.csrfToken).not.toBe(owner.csrfToken);
    expect((await client.get('/session')).body.account.email).toBe('grace@example.test');

    const cliAccount = await t.store.createAccount({ email: 'cli@example.test', tier: 'free' });
    for (const [email, password] of [
      ['grace@example.test', 'wrong password!'],
      ['nobody@example.test', PASSWORD],
      [cliAccount.email, PASSWORD],
      [cliAccount.id, PASSWORD],
    ]) {
      const res = await new DashboardClient(t).post('/signin', { email, password });
      expectUnifiedError(res, 401, 'Invalid email or password.');
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it('signing in again from the same browser ends the session its cookie held', async () => {
    const client = await signedUpClient(t, { email: `again-${database}@example.test` });
    const firstToken = client.cookie!.split('=')[1]!;
    expect((await client.signIn(`again-${database}@example.test`, PASSWORD)).status).toBe(200);
    expect(client.cookie!.split('=')[1]).not.toBe(firstToken);
    expect(await t.store.findSession(hashSessionToken(firstToken))).toBeUndefined();
    expect((await client.get('/session')).status).toBe(200);
  });

  it('calls without a session, or with an unknown cookie, are 401 Unauthenticated.', async () => {
    expectUnifiedError(await new DashboardClient(t).get('/session'), 401, 'Unauthenticated.');
    const forged = new DashboardClient(t);
    forged.cookie = 'lmgate_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    expectUnifiedError(await forged.get('/overview'), 401, 'Unauthenticated.');
  });

  it('sign-out deletes the session: the old cookie is dead afterwards', async () => {
    const client = await signedUpClient(t);
    const oldCookie = client.cookie!;
    const res = await client.post('/signout');
    expect(res.status).toBe(204);
    expect(res.headers.getSetCookie()[0]).toMatch(/^lmgate_session=;/);
    expect(await t.store.findSession(hashSessionToken(oldCookie.split('=')[1]!))).toBeUndefined();

    const replay = new DashboardClient(t);
    replay.cookie = oldCookie;
    expectUnifiedError(await replay.get('/session'), 401, 'Unauthenticated.');
  });

  it('an expired session is refused and its row pruned', async () => {
    const client = await signedUpClient(t);
    const token = 'expired-token-for-the-test-0000000000000000';
    const past = new Date(Date.now() - 1000).toISOString();
    await t.store.createSession({
      tokenHash: hashSessionToken(token),
      accountId: client.account.id,
      csrfToken: 'x',
      createdAt: past,
      expiresAt: past,
      lastSeenAt: past,
      authMethod: 'password',
      orgId: null,
    });
    const stale = new DashboardClient(t);
    stale.cookie = `lmgate_session=${token}`;
    expectUnifiedError(await stale.get('/session'), 401, 'Unauthenticated.');
    expect(await t.store.findSession(hashSessionToken(token))).toBeUndefined();
  });

  it('a state-changing call without the CSRF token, or with a wrong one, is 403 and changes nothing', async () => {
    const client = await signedUpClient(t);
    expectUnifiedError(await client.post('/keys', { name: 'ci' }, { csrf: null }), 403, 'Missing or invalid CSRF token.');
    expectUnifiedError(await client.post('/keys', { name: 'ci' }, { csrf: `${client.csrfToken}x` }), 403);
    expectUnifiedError(await client.post('/signout', undefined, { csrf: 'wrong' }), 403);
    expect(await t.store.listKeys(client.account.id)).toEqual([]);
    expect((await client.get('/session')).status).toBe(200);
    expect((await client.post('/keys', { name: 'ci' })).status).toBe(201);
  });

  it('a state-changing call whose Origin names another host is 403, sign-in included', async () => {
    const client = await signedUpClient(t, { email: 'origin@example.test' });
    const evil = { origin: 'http://evil.example' };
    expectUnifiedError(await client.post('/keys', { name: 'x' }, { headers: evil }), 403, 'Cross-origin request refused.');
    expectUnifiedError(await new DashboardClient(t).post('/signin', { email: 'origin@example.test', password: PASSWORD }, { headers: evil }), 403);
    expectUnifiedError(await new DashboardClient(t).post('/signup', { email: 'o2@example.test', password: PASSWORD }, { headers: { origin: 'null' } }), 403);
    const same = await new DashboardClient(t).post('/signin', { email: 'origin@example.test', password: PASSWORD }, { headers: { origin: t.origin } });
    expect(same.status).toBe(200);
  });

  it('a body that is not JSON is 415, malformed JSON is 400', async () => {
    const client = await signedUpClient(t);
    const form = await client.request('POST', '/keys', { body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectUnifiedError(form, 415);
    const text = await new DashboardClient(t).request('POST', '/signin', { body: '{"email":"a@b.c"}', headers: { 'content-type': 'text/plain' } });
    expectUnifiedError(text, 415);
    expectUnifiedError(await client.post('/keys', '{"name":'), 400);
  });

  it('a password change needs the current password, signs out every other session and keeps this one', async () => {
    const email = `change-${database}@example.test`;
    const client = await signedUpClient(t, { email });
    const other = new DashboardClient(t);
    expect((await other.signIn(email, PASSWORD)).status).toBe(200);

    const wrong = await client.post('/password', { currentPassword: 'not the password', newPassword: 'a new long password' });
    expectUnifiedError(wrong, 403, 'Current password is incorrect.');
    expect((await other.get('/session')).status).toBe(200);
    expectUnifiedError(await client.post('/password', { currentPassword: PASSWORD, newPassword: 'short' }), 422);

    const res = await client.post('/password', { currentPassword: PASSWORD, newPassword: 'a new long password' });
    expect(res.status).toBe(204);
    expect((await client.get('/session')).status).toBe(200);
    expectUnifiedError(await other.get('/session'), 401);
    expectUnifiedError(await new DashboardClient(t).post('/signin', { email, password: PASSWORD }), 401);
    expect((await new DashboardClient(t).signIn(email, 'a new long password')).status).toBe(200);
  });
});

describe('dashboard sign-up settings', () => {
  it('closed sign-up is 403 "Sign-up is closed." and /config says so', async () => {
    const t = await startApp({ overrides: { signup: { open: false } } });
    try {
      expect((await new DashboardClient(t).get('/config')).body.signupOpen).toBe(false);
      const res = await new DashboardClient(t).post('/signup', { email: 'closed@example.test', password: PASSWORD });
      expectUnifiedError(res, 403, 'Sign-up is closed.');
      expect(await t.store.findAccount('closed@example.test')).toBeUndefined();
      // Whatever the form holds: there is nothing to correct.
      expectUnifiedError(await new DashboardClient(t).post('/signup', { email: 'not-an-email' }), 403, 'Sign-up is closed.');
    } finally {
      await t.close();
    }
  });

  it('signup.credits are granted in the ledger, and api_host adds its base address', async () => {
    const t = await startApp({ overrides: { signup: { credits: 2.5 }, server: { port: 0, api_host: 'api.example.test' } } });
    try {
      const client = await signedUpClient(t);
      expect(await t.store.balanceOf(client.account.id)).toBe(2_500_000);
      expect(await t.store.listLedger(client.account.id)).toMatchObject([{ kind: 'grant', amountMicros: 2_500_000 }]);
      expect((await client.get('/config')).body.baseUrls).toEqual([`${t.origin}/v1`, `${t.origin}/api/v1`, 'https://api.example.test/v1']);
    } finally {
      await t.close();
    }
  });
});

describe('dashboard sign-up throttling', () => {
  it('allows signup.per_address_per_hour sign-ups from one address, then 429 with Retry-After', async () => {
    const t = await startApp({ overrides: { signup: { per_address_per_hour: 2 } } });
    try {
      for (const n of [1, 2]) {
        expect((await new DashboardClient(t).post('/signup', { email: `many${n}@example.test`, password: PASSWORD })).status).toBe(201);
      }
      const refused = await new DashboardClient(t).post('/signup', { email: 'many3@example.test', password: PASSWORD });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
      expect(await t.store.findAccount('many3@example.test')).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('counts a malformed attempt too, and refuses an address over its allowance before reading the body', async () => {
    const t = await startApp({ overrides: { signup: { per_address_per_hour: 2 } } });
    try {
      expectUnifiedError(await new DashboardClient(t).post('/signup', { email: 'not-an-email', password: 'short' }), 422);
      expect((await new DashboardClient(t).post('/signup', { email: 'once@example.test', password: PASSWORD })).status).toBe(201);
      expectUnifiedError(await new DashboardClient(t).post('/signup', { email: 'not-an-email' }), 429);
    } finally {
      await t.close();
    }
  });
});

describe('dashboard behind a trusted TLS proxy', () => {
  it('marks the cookie Secure and derives the base addresses and the Origin check from the forwarded request', async () => {
    const t = await startApp({ overrides: { server: { port: 0, trust_proxy: true } } });
    try {
      const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'dash.example.test' };
      const config = await new DashboardClient(t).get('/config', { headers: forwarded });
      expect(config.body.baseUrls).toEqual(['https://dash.example.test/v1', 'https://dash.example.test/api/v1']);
      const res = await new DashboardClient(t).post(
        '/signup',
        { email: 'proxied@example.test', password: PASSWORD },
        { headers: { ...forwarded, origin: 'https://dash.example.test' } },
      );
      expect(res.status).toBe(201);
      expect(res.headers.getSetCookie()[0]).toMatch(/; Secure/i);
      const plain = await new DashboardClient(t).post('/signin', { email: 'proxied@example.test', password: PASSWORD });
      expect(plain.headers.getSetCookie()[0]).not.toMatch(/; Secure/i);
    } finally {
      await t.close();
    }
  });
});

describe('dashboard sign-in throttling', () => {
  let t: TestApp;

  // A fresh process per test: the counts live in memory, and each test starts from zero.
  beforeEach(async () => {
    t = await startApp();
  });
  afterEach(() => t.close());

  it('after 5 failures for an account, sign-in is 429 with Retry-After, even with the right password', async () => {
    const email = 'throttled@example.test';
    await signedUpClient(t, { email });
    for (let i = 0; i < 5; i++) {
      expectUnifiedError(await new DashboardClient(t).post('/signin', { email, password: `wrong password ${i}` }), 401);
    }
    const res = await new DashboardClient(t).post('/signin', { email, password: PASSWORD });
    expectUnifiedError(res, 429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(res.body.retry_after).toBe(retryAfter);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('wrong current passwords at a password change count too: the sixth try is 429', async () => {
    const client = await signedUpClient(t, { email: 'guessing@example.test' });
    for (let i = 0; i < 5; i++) {
      expectUnifiedError(await client.post('/password', { currentPassword: `guess number ${i}`, newPassword: 'a new long password' }), 403);
    }
    const res = await client.post('/password', { currentPassword: PASSWORD, newPassword: 'a new long password' });
    expectUnifiedError(res, 429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await new DashboardClient(t).post('/signin', { email: 'guessing@example.test', password: PASSWORD })).status).toBe(429);
  });

  it('after 20 failures from one address, any sign-in from it is 429', async () => {
    const email = 'address@example.test';
    await signedUpClient(t, { email });
    // Every one of these names a different (unknown) account, so only the address counts.
    const failures = await Promise.all(
      Array.from({ length: 20 }, (_, i) => new DashboardClient(t).post('/signin', { email: `guess${i}@example.test`, password: PASSWORD })),
    );
    for (const res of failures) expectUnifiedError(res, 401);
    const res = await new DashboardClient(t).post('/signin', { email, password: PASSWORD });
    expectUnifiedError(res, 429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
