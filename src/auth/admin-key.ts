// Admin API keys: the customer keys' form (random base62 and a CRC32 checksum, auth/api-key.ts)
// behind a prefix of their own, so neither kind can pass for the other and a scanner tells
// a leaked admin key from a customer's. Only the SHA-256 is stored, with the key's scopes.
import { generateKeyWithPrefix, isWellFormedKeyWithPrefix, type GeneratedKey } from './api-key.js';
import type { AdminScope } from '../store/store.js';

export const ADMIN_KEY_PREFIX = 'sk-lmgadm-';

export const ADMIN_SCOPES: readonly AdminScope[] = ['read', 'accounts', 'credits', 'keys'];

export function generateAdminKey(): GeneratedKey {
  return generateKeyWithPrefix(ADMIN_KEY_PREFIX);
}

export function isWellFormedAdminKey(candidate: string): boolean {
  return isWellFormedKeyWithPrefix(candidate, ADMIN_KEY_PREFIX);
}

export function isAdminScope(text: string): text is AdminScope {
  return (ADMIN_SCOPES as readonly string[]).includes(text);
}
