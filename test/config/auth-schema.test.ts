// The `auth.oidc` settings: their defaults, what is refused (a plain-http provider beyond
// loopback, a secret in the file, an unknown role), and a client secret that must be set.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { openOidcSignIn } from '../../src/dashboard/routes/oidc-sign-in.js';

const load = (oidc: Record<string, unknown>) => loadConfig({ env: {}, cwd: '/nonexistent', overrides: { auth: { oidc } } });

function problems(oidc: Record<string, unknown>): string[] {
  try {
    load(oidc);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('the config loaded');
}

describe('auth.oidc', () => {
  it('is off unless configured, and fills its defaults when it is', () => {
    expect(loadConfig({ env: {}, cwd: '/nonexistent' }).auth.oidc).toBeUndefined();
    expect(load({ issuer: 'https://id.example.com', client_id: 'lmgate', allowed_domains: ['@Example.COM'] }).auth.oidc).toEqual({
      issuer: 'https://id.example.com',
      client_id: 'lmgate',
      client_secret_env: 'LMGATE_OIDC_CLIENT_SECRET',
      allowed_domains: ['example.com'],
      button_label: 'Sign in with SSO',
    });
    expect(load({ issuer: 'https://id.example.com', client_id: 'c', first_sign_in: { org: 'acme' } }).auth.oidc?.first_sign_in).toEqual({ org: 'acme', role: 'member' });
  });

  it('takes plain http only for a provider on loopback', () => {
    expect(load({ issuer: 'http://127.0.0.1:9000', client_id: 'c' }).auth.oidc?.issuer).toBe('http://127.0.0.1:9000');
    expect(problems({ issuer: 'http://id.example.com', client_id: 'c' }).join('\n')).toMatch(/auth\.oidc\.issuer.*https/);
  });

  it('refuses a secret written in the file, and a role organisations do not have', () => {
    expect(problems({ issuer: 'https://id.example.com', client_id: 'c', client_secret: 's3cret' }).join('\n')).toMatch(/client_secret/);
    expect(problems({ issuer: 'https://id.example.com', client_id: 'c', first_sign_in: { org: 'acme', role: 'boss' } }).join('\n')).toMatch(/auth\.oidc\.first_sign_in\.role/);
  });

  it('stops the start when the variable holding the client secret is not set', () => {
    const oidc = load({ issuer: 'https://id.example.com', client_id: 'c', client_secret_env: 'NOT_SET_ANYWHERE' }).auth.oidc!;
    expect(() => openOidcSignIn(oidc, () => undefined)).toThrow(/auth\.oidc\.client_secret_env: NOT_SET_ANYWHERE is not set/);
    expect(openOidcSignIn(oidc, () => 'the secret').config).toBe(oidc);
  });
});
