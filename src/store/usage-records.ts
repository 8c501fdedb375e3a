// Usage records as the Store port holds them (store.ts re-exports these): one per request
// that reached a model, what a batch could not charge in full, and their sums by day.
import type { UsageTotals } from './report-records.js';
import type { UsageBasis, UsageOutcome } from './usage-basis.js';

/** One chat request that reached a model. */
export interface UsageRecord {
  id: string;
  requestId: string;
  accountId: string;
  keyId: string;
  /** In an organisation: the member who made the key (budgets and usage by member count it). */
  memberId: string | null;
  model: string;
  /** Every input token; the kinds below are parts of it (billing/usage.ts). */
  promptTokens: number;
  /** Every output token, reasoning included. */
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
  reasoningTokens: number;
  /** The upstream's report, or lmgate's count (the upstream gave none). */
  basis: UsageBasis;
  outcome: UsageOutcome;
  /** Price × usage, kind by kind: what the answer's `usage.cost` said. */
  costMicros: number;
  /** Of `costMicros`, what the account could not pay: its balance reached 0. */
  shortfallMicros: number;
  /** What the request held at admission (its worst case as estimated). */
  heldMicros: number;
  latencyMs: number;
  /** HTTP status the client saw (499 when it disconnected first). */
  status: number;
  streamed: boolean;
  finishReason: string | null;
  createdAt: string;
}

/** A usage charge the balance could not cover in full: it was cut to what was left. */
export interface CappedCharge {
  accountId: string;
  usageId: string;
  costMicros: number;
  chargedMicros: number;
}

/** Usage summed per UTC day (`YYYY-MM-DD`); days without requests are absent. */
export interface UsageSummary {
  days: (UsageTotals & { date: string })[];
  byModel: (UsageTotals & { date: string; model: string })[];
  byKey: (UsageTotals & { date: string; keyId: string })[];
}

/** Half-open: from `fromIso` (inclusive) to `untilIso` (exclusive). */
export interface TimeRange {
  fromIso: string;
  untilIso: string;
}
