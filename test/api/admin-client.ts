// The admin API as scripts and the console call it: an admin key as Bearer, or an
// operator's session cookie with its CSRF token on writes. And the table of every admin
// route with the scope it needs and a body it accepts, which the scope and OpenAPI suites share.
import { Commands } from '../../src/commands/commands.js';
import { Sessions } from '../../src/web-session/sessions.js';
import type { AdminScope } from '../../src/store/store.js';
import type { LooseJson } from '../helpers/json.js';
import type { TestApp } from '../helpers/start-app.js';

export interface AdminResponse {
  status: number;
  headers: Headers;
  body: LooseJson;
}

export type Credentials = { bearer: string } | { cookie: string; csrf?: string } | Record<string, never>;

export async function adminCall(t: TestApp, credentials: Credentials, method: string, path: string, body?: unknown): Promise<AdminResponse> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if ('bearer' in credentials) headers.authorization = `Bearer ${credentials.bearer}`;
  if ('cookie' in credentials) {
    headers.cookie = credentials.cookie;
    if (credentials.csrf !== undefined && method !== 'GET') headers['x-csrf-token'] = credentials.csrf;
  }
  const res = await fetch(`${t.origin}/api/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** An admin key with these scopes, made as `lmgate admin-keys create` makes it. */
export async function adminKey(t: TestApp, scopes: AdminScope[]): Promise<string> {
  const { secret } = await new Commands(t.store).adminKeys.create(`test ${scopes.join(',')}`, scopes, { kind: 'cli', id: 'test' });
  return secret;
}

let sessionCounter = 0;

/** A signed-in dashboard session of a new account with this role. */
export async function sessionOf(t: TestApp, role: 'customer' | 'operator'): Promise<{ cookie: string; csrf: string; accountId: string }> {
  const account = await t.store.signUp({
    email: `${role}${++sessionCounter}-${process.pid}@example.test`,
    name: null,
    tier: t.config.default_tier,
    passwordHash: 'scrypt$not-a-hash',
    creditsMicros: 0,
  });
  if (role === 'operator') await t.store.setAccountRole(account.id, 'operator');
  const { token, session } = await new Sessions(t.store).start(account.id);
  return { cookie: `lmgate_session=${token}`, csrf: session.csrfToken, accountId: account.id };
}

export interface AdminRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** With :account, :key, :code, :org and :member standing for real ids. */
  path: string;
  scope: AdminScope;
  body?: unknown;
  /** The status with the scope (the call itself succeeds). */
  status: number;
}

export const ADMIN_ROUTES: AdminRoute[] = [
  { method: 'GET', path: '/accounts', scope: 'read', status: 200 },
  { method: 'POST', path: '/accounts', scope: 'accounts', body: { email: 'new-account@example.test' }, status: 201 },
  { method: 'GET', path: '/accounts/:account', scope: 'read', status: 200 },
  { method: 'POST', path: '/accounts/:account/suspend', scope: 'accounts', status: 200 },
  { method: 'POST', path: '/accounts/:account/reactivate', scope: 'accounts', status: 200 },
  { method: 'POST', path: '/accounts/:account/tier', scope: 'accounts', body: { tier: 'pro' }, status: 200 },
  { method: 'POST', path: '/accounts/:account/price-multiplier', scope: 'accounts', body: { price_multiplier_ppm: 900_000 }, status: 200 },
  { method: 'POST', path: '/accounts/:account/password', scope: 'accounts', body: {}, status: 200 },
  { method: 'GET', path: '/accounts/:account/keys', scope: 'read', status: 200 },
  { method: 'POST', path: '/accounts/:account/keys', scope: 'keys', body: { name: 'ci' }, status: 201 },
  { method: 'POST', path: '/keys/:key/revoke', scope: 'keys', status: 200 },
  { method: 'POST', path: '/accounts/:account/credits/grant', scope: 'credits', body: { amount_micros: 1_000_000, reason: 'test' }, status: 200 },
  { method: 'POST', path: '/accounts/:account/credits/adjust', scope: 'credits', body: { amount_micros: -1, reason: 'test' }, status: 200 },
  { method: 'GET', path: '/accounts/:account/ledger', scope: 'read', status: 200 },
  { method: 'GET', path: '/accounts/:account/requests', scope: 'read', status: 200 },
  { method: 'GET', path: '/codes', scope: 'read', status: 200 },
  { method: 'POST', path: '/codes', scope: 'credits', body: { amount_micros: 1_000_000 }, status: 201 },
  { method: 'POST', path: '/codes/:code/disable', scope: 'credits', status: 200 },
  { method: 'GET', path: '/usage', scope: 'read', status: 200 },
  { method: 'GET', path: '/upstreams', scope: 'read', status: 200 },
  { method: 'GET', path: '/audit', scope: 'read', status: 200 },
  { method: 'GET', path: '/catalog', scope: 'read', status: 200 },
  { method: 'GET', path: '/me', scope: 'read', status: 200 },
  { method: 'GET', path: '/orgs', scope: 'read', status: 200 },
  { method: 'POST', path: '/orgs', scope: 'accounts', body: { name: ':name', owner: ':account' }, status: 201 },
  { method: 'GET', path: '/orgs/:org', scope: 'read', status: 200 },
  { method: 'PATCH', path: '/orgs/:org', scope: 'accounts', body: { require_sso: true }, status: 200 },
  { method: 'POST', path: '/orgs/:org/members', scope: 'accounts', body: { account: ':person', role: 'admin' }, status: 200 },
  { method: 'DELETE', path: '/orgs/:org/members/:member', scope: 'accounts', status: 200 },
  { method: 'PUT', path: '/orgs/:org/budgets', scope: 'accounts', body: { member: null, monthly_micros: 1_000_000 }, status: 200 },
  { method: 'GET', path: '/accounts/:account/alerts', scope: 'read', status: 200 },
  { method: 'PUT', path: '/accounts/:account/alerts', scope: 'accounts', body: { balance_below_micros: 1_000_000, budget_thresholds: [50, 90] }, status: 200 },
];
