import { describe, expect, it } from 'vitest';
import { hashPassword, verifyAgainstDecoy, verifyPassword } from '../../src/auth/passwords.js';

describe('password hashes', () => {
  it('are self-describing scrypt strings with a 16-byte salt and a 64-byte key, salted per hash', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse battery'), hashPassword('correct horse battery')]);
    const [scheme, n, r, p, salt, key] = a.split('$');
    expect([scheme, n, r, p]).toEqual(['scrypt', '131072', '8', '1']);
    expect(Buffer.from(salt!, 'base64')).toHaveLength(16);
    expect(Buffer.from(key!, 'base64')).toHaveLength(64);
    expect(b).not.toBe(a);
  });

  it('verify the right password only, with composed and decomposed forms treated alike', async () => {
    const stored = await hashPassword('café au lait!');
    expect(await verifyPassword('café au lait!', stored)).toBe(true);
    expect(await verifyPassword('cafe\u0301 au lait!', stored)).toBe(true);
    expect(await verifyPassword('cafe au lait!', stored)).toBe(false);
  });

  it('refuse values this module did not write, and hashes demanding absurd cost', async () => {
    expect(await verifyPassword('x', 'plain-text-password')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$3$8$1$AAAA$AAAAAAAAAAAAAAAAAAAAAA==')).toBe(false);
    expect(await verifyPassword('x', `scrypt$${2 ** 24}$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAA==`)).toBe(false);
  });

  it('verify a hash written with other parameters (the cost may change later)', async () => {
    const { scryptSync, randomBytes } = await import('node:crypto');
    const salt = randomBytes(16);
    const key = scryptSync('older password', salt, 32, { N: 2 ** 14, r: 8, p: 1 });
    const stored = `scrypt$16384$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
    expect(await verifyPassword('older password', stored)).toBe(true);
    expect(await verifyPassword('other password', stored)).toBe(false);
  });

  it('the decoy check always says no', async () => {
    expect(await verifyAgainstDecoy('anything at all')).toBe(false);
  });
});
