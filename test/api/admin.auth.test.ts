// Who may call the admin API, on SQLite and PostgreSQL: every route refuses a key without
// its scope (403) and serves one with it; customer keys and sessions are refused (403);
// admin keys are unknown to /v1 (401); an operator's session needs its CSRF token on
// writes and lasts 12 hours at most.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPES } from '../../src/auth/admin-key.js';
import { Commands } from '../../src/commands/commands.js';
import { hashSessionToken } from '../../src/web-session/sessions.js';
import { KyselyStore } from '../../src/store/kysely-store.js';
import type { LooseJson } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { ADMIN_ROUTES, adminCall, adminKey, sessionOf, type AdminRoute } from './admin-client.js';

describe.each(['sqlite', 'postgres'] as const)('admin API authorization on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ database });
  });
  afterAll(async () => {
    await t.close();
  });

  let orgs = 0;
  /** The route's path and body with fresh ids for what they name, so each call can succeed. */
  async function callOf(route: AdminRoute): Promise<{ path: string; body: unknown }> {
    const commands = new Commands(t.store);
    const { account } = await t.createAccount({ credits: 10 });
    const { account: member } = await t.createAccount();
    const { account: person } = await t.createAccount();
    const key = await commands.keys.create(account.id, 'k');
    const [code] = await commands.codes.create({ amountMicros: 1, count: 1, expiresAt: null }, { kind: 'cli', id: 'test' });
    const org = await commands.orgs.create(`Org ${++orgs} ${Math.random()}`, account, t.config.default_tier);
    await commands.orgs.setMember(org.id, member, 'member');
    const ids: Record<string, string> = { account: account.id, key: key.record.id, code: code!.record.id, org: org.id, member: member.id, person: person.id, name: `New org ${Math.random()}` };
    const fill = (text: string) => text.replace(/:(account|key|code|org|member|person|name)/g, (_, name: string) => ids[name]!);
    return { path: fill(route.path), body: route.body === undefined ? undefined : JSON.parse(fill(JSON.stringify(route.body))) };
  }

  it.each(ADMIN_ROUTES)('$method $path needs the $scope scope', async (route) => {
    const others = ADMIN_SCOPES.filter((scope) => scope !== route.scope);
    const refusedCall = await callOf(route);
    const without = await adminCall(t, { bearer: await adminKey(t, others) }, route.method, refusedCall.path, refusedCall.body);
    expect(without.status).toBe(403);
    expect(without.body.error).toMatchObject({ code: 403, reason: 'scope_missing', request_id: without.headers.get('x-request-id') });

    const scoped = await callOf(route);
    const body = route.path === '/accounts' && route.method === 'POST' ? { email: `scoped-${Math.random()}@example.test` } : scoped.body;
    const withScope = await adminCall(t, { bearer: await adminKey(t, [route.scope]) }, route.method, scoped.path, body);
    expect(withScope.status, JSON.stringify(withScope.body)).toBe(route.status);
  });

  it('asks for the credits scope too when an account is created with credits', async () => {
    const bearer = await adminKey(t, ['accounts']);
    const refused = await adminCall(t, { bearer }, 'POST', '/accounts', { email: 'rich@example.test', credits_micros: 5 });
    expect(refused.status).toBe(403);
    expect(await t.store.findAccount('rich@example.test')).toBeUndefined();
    const both = await adminCall(t, { bearer: await adminKey(t, ['accounts', 'credits']) }, 'POST', '/accounts', { email: 'rich@example.test', credits_micros: 5 });
    expect(both.status).toBe(201);
    expect(both.body.account).toMatchObject({ email: 'rich@example.test', balance_micros: 5 });
  });

  it('refuses a customer key and a customer session with 403, and an unknown or revoked customer key with 401', async () => {
    const { account, apiKey } = await t.createAccount();
    const byKey = await adminCall(t, { bearer: apiKey }, 'GET', '/accounts');
    expect(byKey.status).toBe(403);
    expect(byKey.body.error.reason).toBe('not_an_operator');

    const customer = await sessionOf(t, 'customer');
    for (const [method, path] of [['GET', '/accounts'], ['POST', `/accounts/${account.id}/suspend`]] as const) {
      const bySession = await adminCall(t, customer, method, path);
      expect(bySession.status).toBe(403);
      expect(bySession.body.error.reason).toBe('not_an_operator');
    }
    expect((await t.store.findAccount(account.id))?.status).toBe('active');

    const keys = await t.store.listKeys(account.id);
    await new Commands(t.store).keys.revoke(keys[0]!.id);
    const revoked = await adminCall(t, { bearer: apiKey }, 'GET', '/accounts');
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('key_revoked');
  });

  it('answers 401 without credentials, and for an unknown, malformed or revoked admin key', async () => {
    const none = await adminCall(t, {}, 'GET', '/accounts');
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ code: 401, message: 'Unauthenticated.' });

    const real = await adminKey(t, ['read']);
    const forged = `${real.slice(0, -10)}AAAAAAAAAA`;
    expect((await adminCall(t, { bearer: forged }, 'GET', '/accounts')).body.error.code).toBe('invalid_api_key');
    expect((await adminCall(t, { bearer: 'not a key' }, 'GET', '/accounts')).status).toBe(401);

    const keyId = (await t.store.listAdminKeys()).find((k) => real.startsWith(k.prefix) && real.endsWith(k.lastFour))!.id;
    expect((await adminCall(t, { bearer: real }, 'GET', '/me')).body).toEqual({ actor: { kind: 'admin_key', id: keyId }, scopes: ['read'] });
    await new Commands(t.store).adminKeys.revoke(keyId, { kind: 'cli', id: 'test' });
    const revoked = await adminCall(t, { bearer: real }, 'GET', '/accounts');
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('key_revoked');
  });

  it('never lets an admin key in on /v1: 401 invalid_api_key, as any unknown key', async () => {
    const bearer = await adminKey(t, [...ADMIN_SCOPES]);
    for (const base of ['/v1', '/api/v1']) {
      const res = await fetch(`${t.origin}${base}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as LooseJson).error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error' });
    }
    const subscription = await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${bearer}` } });
    expect(subscription.status).toBe(401);
  });

  it("serves an operator's session with every scope, and needs its CSRF token on writes", async () => {
    const operator = await sessionOf(t, 'operator');
    const { account } = await t.createAccount();
    expect((await adminCall(t, operator, 'GET', '/me')).body).toEqual({ actor: { kind: 'operator', id: operator.accountId }, scopes: [...ADMIN_SCOPES] });

    const noCsrf = await adminCall(t, { cookie: operator.cookie }, 'POST', `/accounts/${account.id}/suspend`);
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error.message).toBe('Missing or invalid CSRF token.');
    expect((await t.store.findAccount(account.id))?.status).toBe('active');

    const suspended = await adminCall(t, operator, 'POST', `/accounts/${account.id}/suspend`);
    expect(suspended.status).toBe(200);
    const [entry] = await t.store.listAudit({ limit: 1, targetId: account.id });
    expect(entry).toMatchObject({ actor: { kind: 'operator', id: operator.accountId }, action: 'account.suspend' });
  });

  it("ends an operator's session 12 hours after sign-in or 1 hour unused, on the admin API and the dashboard alike; a customer's lasts", async () => {
    const HOUR_MS = 60 * 60 * 1000;
    const age = async (who: { cookie: string }, signedInAgoMs: number, seenAgoMs: number): Promise<string> => {
      const tokenHash = hashSessionToken(who.cookie.split('=')[1]!);
      const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
      await (t.store as KyselyStore).db.updateTable('sessions').set({ created_at: ago(signedInAgoMs), last_seen_at: ago(seenAgoMs) }).where('token_hash', '=', tokenHash).execute();
      return tokenHash;
    };
    const dashboardSession = (who: { cookie: string }) => fetch(`${t.origin}/api/dashboard/session`, { headers: { cookie: who.cookie } });

    const fresh = await sessionOf(t, 'operator');
    await age(fresh, 11 * HOUR_MS, 0);
    expect((await adminCall(t, fresh, 'GET', '/accounts')).status).toBe(200);

    const old = await sessionOf(t, 'operator');
    const oldHash = await age(old, 13 * HOUR_MS, 0);
    expect((await adminCall(t, old, 'GET', '/accounts')).status).toBe(401);
    expect(await t.store.findSession(oldHash)).toBeUndefined();

    const idle = await sessionOf(t, 'operator');
    await age(idle, 2 * HOUR_MS, 2 * HOUR_MS);
    expect((await dashboardSession(idle)).status).toBe(401);
    expect((await adminCall(t, idle, 'GET', '/accounts')).status).toBe(401);

    const customer = await sessionOf(t, 'customer');
    await age(customer, 13 * HOUR_MS, 2 * HOUR_MS);
    expect((await dashboardSession(customer)).status).toBe(200);
  });

  it('refuses a body that is not JSON, and answers an unknown admin path with 404 in the unified body', async () => {
    const bearer = await adminKey(t, [...ADMIN_SCOPES]);
    const { account } = await t.createAccount();
    const form = await fetch(`${t.origin}/api/admin/v1/accounts/${account.id}/credits/grant`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'text/plain' },
      body: 'amount_micros=5',
    });
    expect(form.status).toBe(415);
    const missing = await adminCall(t, { bearer }, 'GET', '/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 404, message: 'Not found.' });
  });
});
