// The reads `npm run bench:usage-scale` times over HTTP against the running lmgate: the
// dashboard's usage page and request log (a session made through the store, as a sign-in
// makes one), the console's Overview and the admin usage query (an admin key made by the
// command the CLI uses). Each read once to warm up, then READS times one after another.
import { Commands } from '../src/commands/commands.js';
import type { Store } from '../src/store/store.js';
import { SESSION_COOKIE, Sessions } from '../src/web-session/sessions.js';

/** Timed reads of each target, after one to warm up. */
export const READS = Number(process.env.BENCH_READS ?? 50);
/** A read far past its target stops after this long (and at least MIN_READS), so a slow one cannot hold the run for an hour. */
const READ_BUDGET_MS = 60_000;
const MIN_READS = 5;
/** The dashboard's and the admin API's longest period (validation/usage-range.ts MAX_DAYS). */
const MAX_DAYS = 366;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface ReadFigures {
  name: string;
  p50Ms: number;
  p95Ms: number;
  /** The answer's size, bytes (the last one). */
  bytes: number;
  /** Reads timed: READS, or fewer when they ran past READ_BUDGET_MS. */
  reads: number;
  /** Why it could not be timed (a status other than 200, a refused period). */
  error?: string;
}

export interface ReadTarget {
  name: string;
  /** Paths read together, as the page does (in parallel); each must answer 200. */
  paths: string[];
  headers: Record<string, string>;
}

export async function dashboardHeaders(store: Store, accountId: string): Promise<Record<string, string>> {
  const { token } = await new Sessions(store).start(accountId);
  return { cookie: `${SESSION_COOKIE}=${token}` };
}

export async function adminHeaders(store: Store): Promise<Record<string, string>> {
  const { secret } = await new Commands(store).adminKeys.create('bench usage-scale', ['read'], { kind: 'cli', id: 'bench' });
  return { authorization: `Bearer ${secret}` };
}

/** `from`/`to` query parameters of the last `days` UTC days up to today. */
export function lastDays(days: number, nowMs: number): string {
  const to = new Date(nowMs).toISOString().slice(0, 10);
  const from = new Date(nowMs - (days - 1) * DAY_MS).toISOString().slice(0, 10);
  return `from=${from}&to=${to}`;
}

/**
 * The whole period from `fromMs` as days; when it is longer than the API accepts (13
 * months is more than 366 days), the 366 days up to today, and the label says so.
 */
export function wholePeriod(fromMs: number, nowMs: number): { query: string; label: string } {
  const days = Math.floor(nowMs / DAY_MS) - Math.floor(fromMs / DAY_MS) + 1;
  return days <= MAX_DAYS ? { query: lastDays(days, nowMs), label: `${days} d` } : { query: lastDays(MAX_DAYS, nowMs), label: `${MAX_DAYS} d (the API's longest)` };
}

export async function timeRead(origin: string, target: ReadTarget): Promise<ReadFigures> {
  const readOnce = async (): Promise<number> => {
    const answers = await Promise.all(
      target.paths.map(async (path) => {
        const response = await fetch(`${origin}${path}`, { headers: target.headers });
        const body = await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status} ${Buffer.from(body).toString('utf8').slice(0, 200)}`);
        return body.byteLength;
      }),
    );
    return answers.reduce((sum, bytes) => sum + bytes, 0);
  };
  try {
    await readOnce();
    const timesMs: number[] = [];
    let bytes = 0;
    const budgetEndMs = performance.now() + READ_BUDGET_MS;
    for (let i = 0; i < READS && (i < MIN_READS || performance.now() < budgetEndMs); i++) {
      const startedMs = performance.now();
      bytes = await readOnce();
      timesMs.push(performance.now() - startedMs);
    }
    timesMs.sort((a, b) => a - b);
    const at = (q: number): number => timesMs[Math.min(timesMs.length - 1, Math.ceil(q * timesMs.length) - 1)]!;
    return { name: target.name, p50Ms: at(0.5), p95Ms: at(0.95), bytes, reads: timesMs.length };
  } catch (err) {
    return { name: target.name, p50Ms: Number.NaN, p95Ms: Number.NaN, bytes: 0, reads: 0, error: (err as Error).message };
  }
}
