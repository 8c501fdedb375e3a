import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { assertSecureTransport, InsecureListenError, isLoopbackHost, readTls } from '../../src/http/transport-policy.js';
import { startApp } from '../helpers/start-app.js';

const dir = mkdtempSync(join(tmpdir(), 'lmgate-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function config(server: Record<string, unknown>) {
  return loadConfig({ env: {}, cwd: dir, overrides: { server } });
}

describe('plain HTTP only on loopback', () => {
  it('recognises loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '10.0.0.5', '::', 'example.com']) expect(isLoopbackHost(host)).toBe(false);
  });

  it('refuses a public address without TLS, saying why', () => {
    expect(() => assertSecureTransport(config({ host: '0.0.0.0' }))).toThrow(InsecureListenError);
    expect(() => assertSecureTransport(config({ host: '0.0.0.0' }))).toThrow(/server\.tls.*trust_proxy.*allow_plain_http/s);
  });

  it('accepts a public address with TLS, a trusted proxy, or an explicit opt-in', () => {
    expect(() => assertSecureTransport(config({ host: '0.0.0.0', tls: { cert: 'c.pem', key: 'k.pem' } }))).not.toThrow();
    expect(() => assertSecureTransport(config({ host: '0.0.0.0', trust_proxy: '10.0.0.0/8' }))).not.toThrow();
    expect(() => assertSecureTransport(config({ host: '0.0.0.0', allow_plain_http: true }))).not.toThrow();
    expect(() => assertSecureTransport(config({ host: '127.0.0.1' }))).not.toThrow();
  });
});

describe('TLS', () => {
  it('serves HTTPS with the configured certificate and key', async () => {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    const t = await startApp({ overrides: { server: { tls: { cert, key } } } });
    try {
      const { apiKey } = await t.createAccount();
      const port = new URL(t.origin).port;
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, path: '/v1/models', headers: { authorization: `Bearer ${apiKey}` }, rejectUnauthorized: false },
          (res) => {
            let data = '';
            res.on('data', (chunk: Buffer) => (data += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, body: data }));
          },
        );
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
      expect(JSON.parse(body).object).toBe('list');
    } finally {
      await t.close();
    }
  });
});

describe('TLS files', () => {
  it('names the field and the file when a certificate or key cannot be read', () => {
    const missing = config({ tls: { cert: join(dir, 'absent-cert.pem'), key: join(dir, 'absent-key.pem') } });
    expect(() => readTls(missing)).toThrow(ConfigError);
    expect(() => readTls(missing)).toThrow(`server.tls.cert: cannot read ${join(dir, 'absent-cert.pem')} (ENOENT)`);
    expect(readTls(config({}))).toBeUndefined();
  });
});
