// A browser stand-in for the dashboard's JSON API: keeps the session cookie and the CSRF
// token, and sends what the web app sends (JSON, x-csrf-token on state changes).
import { expect } from 'vitest';
import { Sessions } from '../../src/web-session/sessions.js';
import { accountView } from '../../src/dashboard/views.js';
import type { TestApp } from '../helpers/start-app.js';
import type { LooseJson } from '../helpers/json.js';

export interface DashboardResponse {
  status: number;
  headers: Headers;
  body: LooseJson;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Override or drop (null) the CSRF header. */
  csrf?: string | null;
  headers?: Record<string, string>;
  /** 'manual' to see a redirect rather than follow it. */
  redirect?: 'follow' | 'manual';
}

let userCounter = 0;

/** What a dashboard client needs of a running app (one instance of a cluster will do). */
export type DashboardTarget = Pick<TestApp, 'origin' | 'store' | 'config'>;

export class DashboardClient {
  cookie: string | undefined;
  csrfToken: string | undefined;
  account: LooseJson;

  constructor(readonly t: DashboardTarget) {}

  async request(method: string, path: string, options: RequestOptions = {}): Promise<DashboardResponse> {
    const headers: Record<string, string> = {};
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookie) headers.cookie = this.cookie;
    const csrf = options.csrf === undefined ? this.csrfToken : options.csrf;
    if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
    const res = await fetch(`${this.t.origin}/api/dashboard${path}`, {
      method,
      redirect: options.redirect,
      headers: { ...headers, ...options.headers },
      body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    });
    for (const setCookie of res.headers.getSetCookie()) {
      const [pair] = setCookie.split(';');
      const value = pair!.slice(pair!.indexOf('=') + 1);
      this.cookie = /max-age=0|expires=thu, 01 jan 1970/i.test(setCookie) || value === '' ? undefined : pair;
    }
    const text = await res.text();
    const isJson = res.headers.get('content-type')?.includes('application/json') ?? false;
    return { status: res.status, headers: res.headers, body: isJson && text ? JSON.parse(text) : undefined, text };
  }

  get(path: string, options?: RequestOptions): Promise<DashboardResponse> {
    return this.request('GET', path, options);
  }

  post(path: string, body?: unknown, options: RequestOptions = {}): Promise<DashboardResponse> {
    return this.request('POST', path, { ...options, body });
  }

  delete(path: string, options?: RequestOptions): Promise<DashboardResponse> {
    return this.request('DELETE', path, options);
  }

  /** Signs up a fresh account (unique email) and keeps its session. */
  async signUp(input: { email?: string; password?: string; name?: string } = {}): Promise<DashboardResponse> {
    const res = await this.post('/signup', {
      email: input.email ?? `person${++userCounter}-${process.pid}@example.test`,
      password: input.password ?? 'correct horse battery',
      ...(input.name === undefined ? {} : { name: input.name }),
    });
    expect(res.status, res.text).toBe(201);
    this.remember(res);
    return res;
  }

  async signIn(email: string, password: string): Promise<DashboardResponse> {
    const res = await this.post('/signin', { email, password });
    if (res.status === 200) this.remember(res);
    return res;
  }

  private remember(res: DashboardResponse): void {
    this.csrfToken = res.body.csrfToken;
    this.account = res.body.account;
  }
}

/** A fresh signed-up client. */
export async function signedUpClient(t: TestApp, input?: { email?: string; password?: string }): Promise<DashboardClient> {
  const client = new DashboardClient(t);
  await client.signUp(input);
  return client;
}

/**
 * A signed-in client whose account and session are made through the store, as sign-up
 * makes them but without hashing a password (128 MiB and half a second of CPU each): for
 * suites about what a session can do, not about signing in.
 */
export async function sessionClient(t: DashboardTarget): Promise<DashboardClient> {
  const account = await t.store.signUp({
    email: `session${++userCounter}-${process.pid}@example.test`,
    name: null,
    tier: t.config.default_tier,
    passwordHash: 'scrypt$not-a-hash',
    creditsMicros: 0,
  });
  const { token, session } = await new Sessions(t.store).start(account.id);
  const client = new DashboardClient(t);
  client.cookie = `lmgate_session=${token}`;
  client.csrfToken = session.csrfToken;
  client.account = accountView(account);
  return client;
}

export function expectUnifiedError(res: DashboardResponse, status: number, message?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error).toMatchObject({ code: status, request_id: res.headers.get('x-request-id') });
  if (message !== undefined) expect(res.body.error.message).toBe(message);
}
