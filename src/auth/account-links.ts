// One-time links mailed or handed to an account's owner: a password reset
// (`lmgate accounts reset-link`, "Forgot password") and a sign-up's email confirmation
// (`signup.verify_email`). The link carries a random token in its fragment (`#token=`),
// which browsers send to no server and put in no Referer; the page posts it. The store
// keeps only its SHA-256, and a token works once, until it expires.
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config/schema.js';
import type { NewAccountToken } from '../store/store.js';

export const RESET_LINK_TTL_MS = 60 * 60 * 1000;
export const RESET_PAGE_PATH = '/reset-password';
export const CONFIRM_LINK_TTL_MS = 24 * 60 * 60 * 1000;
export const CONFIRM_PAGE_PATH = '/confirm-email';
export const SIGN_IN_PAGE_PATH = '/signin';
export const FORGOT_PAGE_PATH = '/forgot-password';

export function hashAccountToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new link token: the token for the link, and its hash for the store. */
export function newLinkToken(): { token: string; tokenHash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: hashAccountToken(token) };
}

/** A new reset token for the account: the token for the link, and what the store keeps. */
export function newResetToken(accountId: string, nowMs = Date.now()): { token: string; stored: NewAccountToken } {
  const { token, tokenHash } = newLinkToken();
  return {
    token,
    stored: {
      tokenHash,
      accountId,
      purpose: 'password_reset',
      createdAt: new Date(nowMs).toISOString(),
      expiresAt: new Date(nowMs + RESET_LINK_TTL_MS).toISOString(),
    },
  };
}

/** A page of the dashboard on `origin` (where the customer reaches it). */
export function pageUrl(origin: string, pagePath: string): string {
  return `${origin.replace(/\/+$/, '')}${pagePath}`;
}

/** The link to a page for a token, on `origin`. */
export function linkTo(origin: string, pagePath: string, token: string): string {
  return `${pageUrl(origin, pagePath)}#token=${token}`;
}

/** Where customers reach the dashboard: server.public_url, else the listening address. */
export function configuredOrigin(config: Config): string {
  if (config.server.public_url) return config.server.public_url;
  const scheme = config.server.tls ? 'https' : 'http';
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  return `${scheme}://${host}:${config.server.port}`;
}
