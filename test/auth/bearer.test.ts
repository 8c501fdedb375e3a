import { describe, expect, it } from 'vitest';
import { statusOf } from '../../src/http/error-reply.js';
import { parseBearer } from '../../src/auth/bearer.js';
import { generateApiKey } from '../../src/auth/api-key.js';
import { UnauthenticatedError } from '../../src/errors.js';

describe('parseBearer', () => {
  it('returns the key from exactly "Bearer <key>"', () => {
    const { secret } = generateApiKey();
    expect(parseBearer(`Bearer ${secret}`)).toBe(secret);
    expect(parseBearer('Bearer x')).toBe('x');
  });

  it('leaves judging the key itself to the key check', () => {
    expect(parseBearer('Bearer not-a-real-key')).toBe('not-a-real-key');
  });

  const malformed: Array<[string, string | undefined]> = [
    ['a missing header', undefined],
    ['an empty header', ''],
    ['a lower-case scheme', 'bearer x'],
    ['an upper-case scheme', 'BEARER x'],
    ['two spaces after the scheme', 'Bearer  x'],
    ['the scheme alone', 'Bearer'],
    ['the scheme and a space but no key', 'Bearer '],
    ['another scheme', 'Basic x'],
    ['a tab instead of the space', 'Bearer\tx'],
    ['a tab inside the key', 'Bearer a\tb'],
    ['two words after the scheme', 'Bearer a b'],
    ['a trailing space', 'Bearer x '],
    ['a trailing newline', 'Bearer x\n'],
    ['a leading space', ' Bearer x'],
    ['no space after the scheme', 'Bearerx'],
    ['a key without a scheme', 'sk-lmg-abc'],
  ];

  it.each(malformed)('rejects %s as unauthenticated', (_label, header) => {
    expect(() => parseBearer(header)).toThrow(UnauthenticatedError);
    try {
      parseBearer(header);
    } catch (err) {
      expect(statusOf(err)).toBe(401);
    }
  });
});
