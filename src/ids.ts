import { randomFillSync } from 'node:crypto';
import { base36Now } from './clock.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn 4 KiB at a time: one getrandom call per ~100 ids instead of one
// per id, since usage records take an id on every request.
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

function nextRandomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** Random base62 text of the given length (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    // 248 = 4 × 62: bytes above it would favour the first characters.
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** Record ids: a readable prefix and 20 base62 characters (~119 bits). */
export function newId(prefix: 'acct' | 'key' | 'usage' | 'code' | 'pay' | 'admkey' | 'inv'): string {
  return `${prefix}_${randomBase62(20)}`;
}

/**
 * Ids for rows written at a high rate (usage records): a fixed-width time prefix, so new
 * rows land at the end of the primary-key index instead of on a random page of it (which,
 * once the index outgrows SQLite's page cache, costs a disk read per insert).
 */
export function newTimeOrderedId(prefix: 'usage' | 'refused'): string {
  return `${prefix}_${base36Now()}${randomBase62(12)}`;
}
