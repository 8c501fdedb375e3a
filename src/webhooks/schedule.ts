// When a failed delivery is tried again: after growing delays (exponential backoff, capped),
// for up to a day after the delivery was made; then it is given up, and the endpoint's
// next event goes.
export interface RetrySchedule {
  /** The wait after the 1st, 2nd, … failed attempt; the last repeats. */
  delaysMs: readonly number[];
  /** Given up once the next attempt would start later than this after the delivery was made. */
  maxAgeMs: number;
}

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = {
  delaysMs: [5 * SEC, 30 * SEC, 2 * MIN, 10 * MIN, 30 * MIN, HOUR, 2 * HOUR, 4 * HOUR],
  maxAgeMs: 24 * HOUR,
};

/** After `failedAttempts` failures (≥ 1): when to try again, or undefined to give up. */
export function nextAttemptAt(schedule: RetrySchedule, failedAttempts: number, createdAtMs: number, nowMs: number): number | undefined {
  const { delaysMs } = schedule;
  const delay = delaysMs[Math.min(failedAttempts, delaysMs.length) - 1] ?? 0;
  const at = nowMs + delay;
  return at - createdAtMs > schedule.maxAgeMs ? undefined : at;
}
