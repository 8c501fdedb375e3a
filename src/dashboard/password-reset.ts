// One-time password-reset links: `lmgate accounts reset-link`, and "Forgot password" when
// mail is configured. The link carries a random token in its fragment (`#token=`), which
// browsers send to no server and put in no Referer; the reset page posts it. The store
// keeps only its SHA-256; the token works once, for RESET_LINK_TTL_MS.
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.js';
import type { NewAccountToken } from '../store/store.js';

export const RESET_LINK_TTL_MS = 60 * 60 * 1000;
export const RESET_PAGE_PATH = '/reset-password';

export function hashAccountToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new reset token for the account: the token for the link, and what the store keeps. */
export function newResetToken(accountId: string, nowMs = Date.now()): { token: string; stored: NewAccountToken } {
  const token = randomBytes(32).toString('base64url');
  return {
    token,
    stored: {
      tokenHash: hashAccountToken(token),
      accountId,
      purpose: 'password_reset',
      createdAt: new Date(nowMs).toISOString(),
      expiresAt: new Date(nowMs + RESET_LINK_TTL_MS).toISOString(),
    },
  };
}

/** The link for a token, on `origin` (the address the customer reaches the dashboard at). */
export function resetLink(origin: string, token: string): string {
  return `${origin.replace(/\/+$/, '')}${RESET_PAGE_PATH}#token=${token}`;
}

/** Where customers reach the dashboard, for links made outside a request (the CLI). */
export function configuredOrigin(config: Config): string {
  if (config.server.public_url) return config.server.public_url;
  const scheme = config.server.tls ? 'https' : 'http';
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  return `${scheme}://${host}:${config.server.port}`;
}
