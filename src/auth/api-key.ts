// API key format: `sk-lmg-` + 43 base62 characters (256 random bits) + a 6-character base62
// CRC32 of everything before it. The checksum lets secret scanners recognise a leaked key
// offline, and lets lmgate reject mistyped or forged keys before any lookup. Only the
// SHA-256 of the whole key is stored.
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { randomBase62 } from '../ids.js';

export const KEY_PREFIX = 'sk-lmg-';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = /^sk-lmg-[0-9A-Za-z]{49}$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export interface GeneratedKey {
  secret: string;
  hash: string;
  /** What the dashboard and CLI show: `sk-lmg-AbCd`. */
  prefix: string;
  lastFour: string;
}

export function generateApiKey(): GeneratedKey {
  const unchecked = KEY_PREFIX + randomBase62(BODY_LENGTH);
  const secret = unchecked + checksumOf(unchecked);
  return { secret, hash: hashApiKey(secret), prefix: secret.slice(0, KEY_PREFIX.length + 4), lastFour: secret.slice(-4) };
}

/** Format and checksum both hold: worth a lookup. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!KEY_PATTERN.test(candidate)) return false;
  const split = candidate.length - CHECKSUM_LENGTH;
  return checksumOf(candidate.slice(0, split)) === candidate.slice(split);
}

export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
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
