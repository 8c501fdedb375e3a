// How lmgate serves the built dashboard: index.html for each page with a strict CSP and
// no-cache, hashed assets cached for good, the app's not-found page (status 404) for a
// browser's unknown page, lmgate's own 404/405 everywhere else, nothing
// added to the API's answers, and a plain 503 when the app was never built.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../../src/http/error-handler.js';
import { WEB_APP_PAGES, webAppRoutes } from '../../src/http/routes/web-app.js';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const CSP =
  "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';frame-ancestors 'none';base-uri 'self';form-action 'self';object-src 'none'";

describe('the built dashboard', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answers every page of the app with index.html, a strict CSP and no-cache', async () => {
    for (const page of WEB_APP_PAGES) {
      const res = await fetch(`${t.origin}${page}`);
      expect(res.status, page).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await res.text();
      expect(html).toContain('<div id="root"></div>');
      // Nothing inline: every script is a file under /assets/.
      expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(html).not.toMatch(/<style|style=/);
    }
    const head = await fetch(`${t.origin}/keys`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('serves hashed assets with a year-long immutable cache', async () => {
    const html = await (await fetch(`${t.origin}/`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]);
    expect(assets.some((path) => path?.endsWith('.js'))).toBe(true);
    expect(assets.some((path) => path?.endsWith('.css'))).toBe(true);
    for (const path of assets) {
      const res = await fetch(`${t.origin}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    const script = await fetch(`${t.origin}${assets.find((path) => path?.endsWith('.js'))}`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript|^application\/javascript/);
    await script.arrayBuffer();
  });

  it('keeps lmgate’s 404 for programs, unknown API paths and missing assets, and 405 for a wrong method', async () => {
    for (const [path, accept, message] of [
      ['/nope', '*/*', 'Model not found.'],
      ['/keys/extra', 'application/json', 'Model not found.'],
      ['/billing', '*/*', 'Model not found.'],
      ['/assets/missing-0000.js', 'text/html', 'Model not found.'],
      ['/v1/nope', 'text/html', 'Model not found.'],
      ['/api/dashboard/nope', 'text/html', 'Not found.'],
    ] as const) {
      const res = await fetch(`${t.origin}${path}`, { headers: { accept } });
      expect(res.status, path).toBe(404);
      const body = await jsonOf(res);
      expect(body.error).toMatchObject({ message, request_id: res.headers.get('x-request-id') });
    }
    for (const [method, path, allow] of [
      ['POST', '/', 'GET, HEAD'],
      ['GET', '/v1/chat/completions', 'POST'],
    ] as const) {
      const res = await fetch(`${t.origin}${path}`, { method, headers: { accept: 'text/html' } });
      expect(res.status, path).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      await res.arrayBuffer();
    }
    // The page catch-all answers GET and HEAD only, and never makes another method a 405.
    const post = await fetch(`${t.origin}/nope`, { method: 'POST', headers: { accept: 'text/html' } });
    expect(post.status).toBe(404);
    await post.arrayBuffer();
  });

  it('answers a browser that navigates to an unknown page with the app (its not-found page) and status 404', async () => {
    for (const path of ['/billing', '/nope/deeper', '/keys/extra?x=1']) {
      const res = await fetch(`${t.origin}${path}`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect(await res.text()).toContain('<div id="root"></div>');
    }
  });

  it('sends a page address with a trailing slash to the page', async () => {
    const res = await fetch(`${t.origin}/signin/?next=%2Fkeys`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/signin?next=%2Fkeys');
    await res.arrayBuffer();
  });

  it('adds no browser security headers to the Bearer-key API', async () => {
    const { apiKey } = await t.createAccount();
    const res = await fetch(`${t.baseURL}/models`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBeNull();
    expect(res.headers.get('x-frame-options')).toBeNull();
    expect(res.headers.get('strict-transport-security')).toBeNull();
    await res.arrayBuffer();
  });
});

describe('an lmgate whose dashboard was never built', () => {
  const emptyDir = mkdtempSync(join(tmpdir(), 'lmgate-no-web-'));
  afterAll(() => rmSync(emptyDir, { recursive: true, force: true }));

  it('still starts, and its pages say how to build the app', async () => {
    const app = Fastify();
    installErrorHandling(app, { clientGone: () => undefined });
    await app.register(webAppRoutes, { distDir: emptyDir });
    try {
      for (const page of WEB_APP_PAGES) {
        const res = await app.inject({ method: 'GET', url: page });
        expect(res.statusCode, page).toBe(503);
        expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(res.body).toContain('npm run build');
      }
      expect((await app.inject({ method: 'GET', url: '/assets/index.js' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });
});
