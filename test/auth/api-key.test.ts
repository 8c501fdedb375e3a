import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { KEY_PREFIX, generateApiKey, hashApiKey, isWellFormedApiKey } from '../../src/auth/api-key.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_FORMAT = /^sk-lmg-[0-9A-Za-z]{43}[0-9A-Za-z]{6}$/;

/**
 * The checksum as a secret scanner would compute it from the documented format: CRC32 of
 * everything before the suffix, written as 6 base62 digits, most significant first.
 */
function scannerChecksum(unchecked: string): string {
  let value = crc32(unchecked);
  let digits = '';
  for (let i = 0; i < 6; i++) {
    digits = BASE62[value % 62] + digits;
    value = Math.floor(value / 62);
  }
  return digits;
}

describe('generated API keys', () => {
  it('are sk-lmg- followed by 43 base62 characters and a 6-character base62 checksum', () => {
    expect(KEY_PREFIX).toBe('sk-lmg-');
    for (let i = 0; i < 200; i++) {
      const { secret } = generateApiKey();
      expect(secret).toMatch(KEY_FORMAT);
      expect(secret).toHaveLength(7 + 43 + 6);
    }
  });

  it('carry the CRC32 of everything before the suffix, which the key check accepts', () => {
    for (let i = 0; i < 200; i++) {
      const { secret } = generateApiKey();
      expect(secret.slice(-6)).toBe(scannerChecksum(secret.slice(0, -6)));
      expect(isWellFormedApiKey(secret)).toBe(true);
    }
  });

  it('are different every time, and their random body uses the whole base62 alphabet', () => {
    const secrets = Array.from({ length: 500 }, () => generateApiKey().secret);
    expect(new Set(secrets).size).toBe(secrets.length);
    const used = new Set(secrets.flatMap((s) => [...s.slice(7, 50)]));
    expect([...used].sort().join('')).toBe([...BASE62].sort().join(''));
  });

  it('are hashed as the hex SHA-256 of the whole secret', () => {
    const key = generateApiKey();
    expect(key.hash).toBe(createHash('sha256').update(key.secret).digest('hex'));
    expect(key.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key.secret)).toBe(key.hash);
    // The published SHA-256 test vector, so the hash is not merely self-consistent.
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('show a prefix of sk-lmg- plus four characters and the last four characters', () => {
    const key = generateApiKey();
    expect(key.prefix).toBe(key.secret.slice(0, 11));
    expect(key.prefix).toMatch(/^sk-lmg-[0-9A-Za-z]{4}$/);
    expect(key.lastFour).toBe(key.secret.slice(-4));
    expect(key.lastFour).toMatch(/^[0-9A-Za-z]{4}$/);
  });
});

describe('the key check', () => {
  it('rejects a key with any single character changed, at every position', () => {
    const { secret } = generateApiKey();
    let tried = 0;
    for (let position = 0; position < secret.length; position++) {
      for (const replacement of BASE62 + '-_') {
        if (replacement === secret[position]) continue;
        const altered = secret.slice(0, position) + replacement + secret.slice(position + 1);
        expect(isWellFormedApiKey(altered), `${altered} (position ${position})`).toBe(false);
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(secret.length * 60);
  });

  it('rejects two swapped neighbouring characters in the body', () => {
    const { secret } = generateApiKey();
    for (let position = 7; position < secret.length - 1; position++) {
      if (secret[position] === secret[position + 1]) continue;
      const swapped = secret.slice(0, position) + secret[position + 1] + secret[position] + secret.slice(position + 2);
      expect(isWellFormedApiKey(swapped), `swap at ${position}`).toBe(false);
    }
  });

  it('rejects keys of the wrong shape', () => {
    const { secret } = generateApiKey();
    const body = secret.slice(7, -6);
    const cases = [
      '',
      'sk-lmg-',
      secret.slice(0, -1),
      secret + 'A',
      secret.toUpperCase(),
      ` ${secret}`,
      `${secret} `,
      `${secret}\n`,
      'sk-xyz-' + body + scannerChecksum('sk-xyz-' + body),
      'sk-' + body + scannerChecksum('sk-' + body),
      'sk-lmg-' + body.slice(0, -1) + '+' + scannerChecksum('sk-lmg-' + body.slice(0, -1) + '+'),
      'sk-lmg-' + body.slice(1) + scannerChecksum('sk-lmg-' + body.slice(1)),
    ];
    for (const candidate of cases) expect(isWellFormedApiKey(candidate), JSON.stringify(candidate)).toBe(false);
  });

  it('accepts any well-formed body whose checksum matches, not just generated ones', () => {
    const unchecked = 'sk-lmg-' + 'a'.repeat(43);
    expect(isWellFormedApiKey(unchecked + scannerChecksum(unchecked))).toBe(true);
  });
});
