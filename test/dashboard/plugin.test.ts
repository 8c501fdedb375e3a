// What the dashboard plugin adds around its routes, and that it stays inside its scope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { DashboardClient, expectUnifiedError } from './dashboard-client.js';

describe('the dashboard plugin', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('an unknown dashboard path is 404 "Not found.", a known one with the wrong method 405 with Allow', async () => {
    const client = new DashboardClient(t);
    for (const res of [await client.get('/nope'), await client.post('/nope', {}), await client.get('/keys/abc/def')]) {
      expectUnifiedError(res, 404, 'Not found.');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const wrongMethod = await client.get('/signin');
    expectUnifiedError(wrongMethod, 405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect((await client.request('PUT', '/keys/key_x')).headers.get('allow')).toBe('PATCH, DELETE');
  });

  it('errors carry the security headers too', async () => {
    const res = await new DashboardClient(t).get('/session');
    expectUnifiedError(res, 401, 'Unauthenticated.');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('its hooks do not reach the Bearer-key API', async () => {
    const { apiKey } = await t.createAccount();
    const res = await fetch(`${t.origin}/v1/models`, {
      headers: { authorization: `Bearer ${apiKey}`, origin: 'http://elsewhere.example', cookie: 'lmgate_session=x' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBeNull();
    expect(res.headers.get('x-content-type-options')).toBeNull();
    const chat = await fetch(`${t.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', origin: 'http://elsewhere.example' },
      body: JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
  });
});
