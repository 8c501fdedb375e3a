// The dashboard's usage period: whole UTC days, `from` and `to` inclusive.
import { Type, type Static } from '@sinclair/typebox';
import { ValidationError } from '../errors.js';
import type { TimeRange } from '../store/store.js';
import { MESSAGES } from './input-validator.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;
const NOT_A_DAY = 'Use a date as YYYY-MM-DD.';

// A repeated parameter arrives as an array: still not a date.
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', [MESSAGES]: { type: NOT_A_DAY, pattern: NOT_A_DAY } });
/** The period in a query string: `from` and `to` as YYYY-MM-DD, each optional. */
export const DayRangeQuery = Type.Object({ from: Type.Optional(Day), to: Type.Optional(Day) });

export interface DayRange {
  from: string;
  to: string;
  /** Every day of the range, oldest first. */
  days: string[];
  time: TimeRange;
}

/** `from`/`to` from a query string; by default the last 30 days up to today. */
export function parseDayRange(query: Static<typeof DayRangeQuery>, nowMs = Date.now()): DayRange {
  const fields: Record<string, string[]> = {};
  const toMs = query.to === undefined ? startOfDayMs(nowMs) : parseDay(query.to, 'to', fields);
  const fromMs = query.from === undefined && toMs !== undefined ? toMs - (DEFAULT_DAYS - 1) * DAY_MS : parseDay(query.from, 'from', fields);
  if (fromMs !== undefined && toMs !== undefined) {
    if (fromMs > toMs) fields.from = ['Must not be after to.'];
    else if ((toMs - fromMs) / DAY_MS + 1 > MAX_DAYS) fields.from = [`The period is at most ${MAX_DAYS} days.`];
  }
  if (Object.keys(fields).length > 0 || fromMs === undefined || toMs === undefined) throw new ValidationError(fields);
  const days: string[] = [];
  for (let at = fromMs; at <= toMs; at += DAY_MS) days.push(dayOf(at));
  return {
    from: dayOf(fromMs),
    to: dayOf(toMs),
    days,
    time: { fromIso: new Date(fromMs).toISOString(), untilIso: new Date(toMs + DAY_MS).toISOString() },
  };
}

/** One UTC day (`YYYY-MM-DD`) as a half-open time range. */
export function dayTimeRange(day: string): TimeRange {
  const startMs = Date.parse(`${day}T00:00:00.000Z`);
  return { fromIso: new Date(startMs).toISOString(), untilIso: new Date(startMs + DAY_MS).toISOString() };
}

function parseDay(value: string | undefined, field: string, fields: Record<string, string[]>): number | undefined {
  const ms = value === undefined ? Number.NaN : Date.parse(`${value}T00:00:00.000Z`);
  // Date.parse rolls 2025-02-30 over to March; a real date reads back the same.
  if (Number.isNaN(ms) || dayOf(ms) !== value) {
    fields[field] = [NOT_A_DAY];
    return undefined;
  }
  return ms;
}

function startOfDayMs(ms: number): number {
  return ms - (ms % DAY_MS);
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
