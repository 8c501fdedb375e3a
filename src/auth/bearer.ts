import { UnauthenticatedError } from '../errors.js';

/**
 * The key from `Authorization: Bearer <key>` (spec 5.1–5.2): the word is case-sensitive
 * and exactly one space separates it from the key; anything else is malformed.
 */
export function parseBearer(header: string | undefined): string {
  if (header === undefined || header === '') throw new UnauthenticatedError('missing Authorization header');
  if (!header.startsWith('Bearer ')) throw new UnauthenticatedError('Authorization is not "Bearer <key>"');
  const key = header.slice(7);
  if (key === '' || /\s/.test(key)) throw new UnauthenticatedError('malformed bearer token');
  return key;
}
