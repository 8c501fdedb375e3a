// An expiry as people type it, for a key (dashboard and CLI) and a redemption code (CLI):
// `YYYY-MM-DD` is valid through that whole UTC day, so it stops at the next midnight; a
// full ISO 8601 time is taken as it is. Either must lie in the future.

const DAY_MS = 24 * 60 * 60 * 1000;

export type ParsedExpiry = { expiresAt: string } | { problem: 'not_a_date' | 'past' };

/** The moment the thing stops working (ISO 8601, UTC), or why `text` gives none. */
export function parseExpiry(text: string, nowMs = Date.now()): ParsedExpiry {
  let expiresMs: number;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const dayMs = Date.parse(`${text}T00:00:00.000Z`);
    // Date.parse rolls 2099-02-30 over into March; the round trip catches it.
    expiresMs = !Number.isNaN(dayMs) && new Date(dayMs).toISOString().startsWith(text) ? dayMs + DAY_MS : Number.NaN;
  } else {
    expiresMs = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  }
  if (Number.isNaN(expiresMs)) return { problem: 'not_a_date' };
  if (expiresMs <= nowMs) return { problem: 'past' };
  return { expiresAt: new Date(expiresMs).toISOString() };
}

/** As it was typed: a UTC midnight is the end of the day before it. */
export function describeExpiry(expiresAt: string | null): string {
  if (expiresAt === null) return 'never';
  if (!expiresAt.endsWith('T00:00:00.000Z')) return expiresAt;
  return `end of ${new Date(Date.parse(expiresAt) - DAY_MS).toISOString().slice(0, 10)} UTC`;
}
