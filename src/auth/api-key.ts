// API key format: `sk-lmg-` + 43 base62 characters (256 random bits) + a 6-character base62
// CRC32 of everything before it. The checksum lets secret scanners recognise a leaked key
// offline, and lets lmgate reject mistyped or forged keys before any lookup. Only the
// SHA-256 of the whole key is stored. Admin keys (admin-key.ts) have the same form
// behind a prefix of their own.
import { hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { randomBase62 } from '../ids.js';

export const KEY_PREFIX = 'sk-lmg-';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export interface GeneratedKey {
  secret: string;
  hash: string;
  /** What the dashboard and CLI show: `sk-lmg-AbCd`. */
  prefix: string;
  lastFour: string;
}

export function generateApiKey(): GeneratedKey {
  return generateKeyWithPrefix(KEY_PREFIX);
}

/** Format and checksum both hold: worth a lookup. */
export function isWellFormedApiKey(candidate: string): boolean {
  return isWellFormedKeyWithPrefix(candidate, KEY_PREFIX);
}

/** A key of this format behind another prefix (admin keys). */
export function generateKeyWithPrefix(keyPrefix: string): GeneratedKey {
  const unchecked = keyPrefix + randomBase62(BODY_LENGTH);
  const secret = unchecked + checksumOf(unchecked);
  return { secret, hash: hashApiKey(secret), prefix: secret.slice(0, keyPrefix.length + 4), lastFour: secret.slice(-4) };
}

export function isWellFormedKeyWithPrefix(candidate: string, keyPrefix: string): boolean {
  if (candidate.length !== keyPrefix.length + BODY_LENGTH + CHECKSUM_LENGTH || !candidate.startsWith(keyPrefix)) return false;
  const split = candidate.length - CHECKSUM_LENGTH;
  return /^[0-9A-Za-z]+$/.test(candidate.slice(keyPrefix.length)) && checksumOf(candidate.slice(0, split)) === candidate.slice(split);
}

export function hashApiKey(secret: string): string {
  // The one-shot form: a third of createHash's cost, on every request.
  return hash('sha256', secret, 'hex');
}

function checksumOf(text: string): string {
  let value = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}
