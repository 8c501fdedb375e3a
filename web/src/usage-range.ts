// The usage page's date range: inclusive UTC days as YYYY-MM-DD, like the API.
const MAX_RANGE_DAYS = 366;
export const PRESET_DAYS = [7, 30, 90] as const;
const DAY_MS = 86_400_000;

export interface DayRange {
  from: string;
  to: string;
}

export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}

/** The last `days` days, today included. */
export function lastDays(days: number, today = todayUtc()): DayRange {
  return { from: addDays(today, -(days - 1)), to: today };
}

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

export function daysIn(range: DayRange): number {
  return Math.round((Date.parse(`${range.to}T00:00:00Z`) - Date.parse(`${range.from}T00:00:00Z`)) / DAY_MS) + 1;
}

export function isDay(value: string | null): value is string {
  return value !== null && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`));
}

/** Why the range cannot be asked for, or null when it can. */
export function rangeProblem(range: DayRange): string | null {
  if (!isDay(range.from) || !isDay(range.to)) return 'Choose both a start and an end date.';
  if (range.from > range.to) return 'The start date must be on or before the end date.';
  if (daysIn(range) > MAX_RANGE_DAYS) return `Choose at most ${MAX_RANGE_DAYS} days.`;
  return null;
}
