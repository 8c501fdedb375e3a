// The current time as text for rows written on every request (usage records and their
// ids): built once per millisecond, not once per call, since a busy server settles several
// requests within one.
let lastMs = -1;
let lastIso = '';
let lastBase36 = '';

/** ISO 8601 in UTC, to the millisecond. */
export function isoNow(): string {
  refresh();
  return lastIso;
}

/** Milliseconds since the epoch in base 36, fixed width (9 digits until the year 5188), so it sorts as text. */
export function base36Now(): string {
  refresh();
  return lastBase36;
}

function refresh(): void {
  const ms = Date.now();
  if (ms === lastMs) return;
  lastMs = ms;
  lastIso = new Date(ms).toISOString();
  lastBase36 = ms.toString(36).padStart(9, '0');
}
