// A fuzz campaign: cases of one seed sent by a few concurrent workers, a normal request
// between every batch to show the service keeps answering, and the figures for the report.
// Used by the test suite (a few thousand cases) and by `npm run fuzz` (a million).
import { generateCase, type FuzzCase, type FuzzTarget } from './cases.js';
import { runCase } from './run-case.js';

export interface CampaignOptions {
  port: number;
  target: FuzzTarget;
  seed: number;
  /** Cases [first, first + count). */
  first?: number;
  count: number;
  concurrency: number;
  /** A normal request every this many cases; it must be answered 200 within `canaryBudgetMs`. */
  canaryEvery: number;
  canaryBudgetMs: number;
  /** Called after each canary, e.g. to sample memory. */
  onProgress?: (done: number) => void;
  /** Stop at the first failure (the test) or collect up to a few (the long run). */
  maxFailures: number;
}

export interface CampaignReport {
  cases: number;
  statuses: Map<number | 'none', number>;
  families: Map<string, number>;
  failures: string[];
  paidRequestIds: Set<string>;
  canaries: number;
  slowestCanaryMs: number;
}

export function replayCommand(seed: number, index: number): string {
  return `FUZZ_SEED=${seed} FUZZ_INDEX=${index} npx vitest run test/fuzz/fuzz.test.ts`;
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const report: CampaignReport = {
    cases: 0,
    statuses: new Map(),
    families: new Map(),
    failures: [],
    paidRequestIds: new Set(),
    canaries: 0,
    slowestCanaryMs: 0,
  };
  const first = options.first ?? 0;
  const end = first + options.count;
  const stopped = (): boolean => report.failures.length >= options.maxFailures;

  const runOne = async (index: number): Promise<void> => {
    let fuzzCase: FuzzCase;
    try {
      fuzzCase = generateCase(options.seed, index, options.target);
    } catch (err) {
      report.failures.push(`seed ${options.seed}, case ${index}: the generator failed: ${(err as Error).message}\n  replay: ${replayCommand(options.seed, index)}`);
      return;
    }
    const outcome = await runCase(options.port, fuzzCase);
    report.cases++;
    tally(report.families, fuzzCase.family);
    if (outcome.statuses.length === 0) tally(report.statuses, 'none');
    for (const status of outcome.statuses) tally(report.statuses, status);
    for (const id of outcome.paidRequestIds) report.paidRequestIds.add(id);
    if (outcome.problems.length > 0) {
      const what = `${fuzzCase.family}: ${fuzzCase.description.slice(0, 300)}`;
      report.failures.push(`seed ${options.seed}, case ${index} (${what}): ${outcome.problems.join('; ')}\n  replay: ${replayCommand(options.seed, index)}`);
    }
  };

  for (let batchStart = first; batchStart < end && !stopped(); batchStart += options.canaryEvery) {
    const batchEnd = Math.min(end, batchStart + options.canaryEvery);
    let next = batchStart;
    const worker = async (): Promise<void> => {
      while (next < batchEnd && !stopped()) await runOne(next++);
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    const canaryMs = await canary(options.port, options.target, options.canaryBudgetMs, report.paidRequestIds);
    report.canaries++;
    report.slowestCanaryMs = Math.max(report.slowestCanaryMs, canaryMs);
    if (canaryMs > options.canaryBudgetMs) report.failures.push(`seed ${options.seed}: a normal request after case ${batchEnd - 1} took ${canaryMs.toFixed(0)} ms`);
    options.onProgress?.(batchEnd - first);
  }
  return report;
}

function tally<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** A plain `hi`, timed; a wrong answer counts as infinitely slow. */
async function canary(port: number, target: FuzzTarget, budgetMs: number, paidRequestIds: Set<string>): Promise<number> {
  const started = performance.now();
  try {
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.keys.funded}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: target.model, messages: [{ role: 'user', content: 'hi' }] }),
      signal: AbortSignal.timeout(budgetMs * 5),
    });
    paidRequestIds.add(response.headers.get('x-request-id') ?? '');
    const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
    if (response.status !== 200 || body.choices?.[0]?.message?.content !== 'hi') return Infinity;
  } catch {
    return Infinity;
  }
  return performance.now() - started;
}
