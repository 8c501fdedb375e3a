// Password hashing with Node's scrypt (memory-hard, no native addon). The stored string
// names its own parameters (`scrypt$N$r$p$salt$hash`), so the cost can be raised later and
// old hashes still verify. scrypt runs on libuv's thread pool, never on the event loop.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// OWASP's current recommendation for scrypt: N=2^17, r=8, p=1 (128 MiB per hash).
const COST = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEY_BYTES = 64;
/** What a new password must be, wherever it is set (dashboard, reset link, CLI). */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;
const SALT_BYTES = 16;
/** The most a stored hash may demand, so a tampered row cannot exhaust memory. */
const MAX_N = 2 ** 20;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, KEY_BYTES, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

/** False for a wrong password and for a stored value that is not a hash this module wrote. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual = await derive(password, parsed.salt, parsed.hash.length, parsed.cost);
  return timingSafeEqual(actual, parsed.hash);
}

/**
 * Spends what a real check costs and answers false: used when there is no account (or no
 * password) for an email, so the answer's timing does not tell whether the account exists.
 */
export async function verifyAgainstDecoy(password: string): Promise<false> {
  const actual = await derive(password, randomBytes(SALT_BYTES), KEY_BYTES, COST);
  timingSafeEqual(actual, randomBytes(KEY_BYTES));
  return false;
}

interface Cost {
  N: number;
  r: number;
  p: number;
}

function parseHash(stored: string): { cost: Cost; salt: Buffer; hash: Buffer } | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const isPowerOfTwo = Number.isSafeInteger(N) && N > 1 && (N & (N - 1)) === 0;
  if (!isPowerOfTwo || N > MAX_N || !Number.isSafeInteger(r) || r < 1 || r > 32 || !Number.isSafeInteger(p) || p < 1 || p > 16) return undefined;
  const salt = Buffer.from(parts[4]!, 'base64');
  const hash = Buffer.from(parts[5]!, 'base64');
  if (salt.length === 0 || hash.length < 16) return undefined;
  return { cost: { N, r, p }, salt, hash };
}

function derive(password: string, salt: Buffer, keyBytes: number, cost: Cost): Promise<Buffer> {
  // NFC: the same password typed on two keyboards can arrive composed or decomposed.
  const secret = password.normalize('NFC');
  // scrypt needs 128·N·r bytes; maxmem (32 MiB by default) must leave room for it.
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, keyBytes, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}
