// What every domain module of the store shares: the executor type (the database, or a
// transaction on it), the clock of written rows, and batching.
import type { Kysely } from 'kysely';
import type { Database } from './tables.js';

/** The database or a transaction on it: every domain function runs on either. */
export type Db = Kysely<Database>;

export const now = (): string => new Date().toISOString();

export function* chunked<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

export function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`not a row limit: ${limit}`);
  return limit;
}

/** A unique index refused the row (better-sqlite3 and pg name it differently). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
