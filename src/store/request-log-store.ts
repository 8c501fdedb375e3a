// The customer's request log as the Store port holds it: the requests refused before any
// model, beside the usage records of those that reached one (request-log.ts reads both).
import type { UsageBasis, UsageOutcome } from './usage-basis.js';
/** An API request refused before any model (its account known), for the request log. */
export interface RefusedRequest {
  id: string;
  requestId: string;
  accountId: string;
  keyId: string;
  /** In an organisation: the member who made the key. */
  memberId: string | null;
  model: string | null;
  path: string;
  status: number;
  /** The 403's error.reason, or the error's code. */
  reason: string | null;
  createdAt: string;
}

/** One line of an account's request log: a usage record, or a refused request. */
export interface RequestLogEntry {
  id: string;
  requestId: string;
  at: string;
  keyId: string;
  model: string | null;
  status: number;
  reason: string | null;
  promptTokens: number;
  completionTokens: number;
  /** Parts of the totals priced apart (0 for a refusal). */
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Where the counts came from, and how the answer ended; null for a refusal. */
  basis: UsageBasis | null;
  outcome: UsageOutcome | null;
  costMicros: number;
  /** Of the cost, what the account could not pay. */
  shortfallMicros: number;
  streamed: boolean;
  refused: boolean;
}

export interface RequestLogQuery {
  sinceIso: string;
  /** The page after this entry (newest first). */
  before?: { at: string; id: string };
  keyId?: string;
  /** An organisation's member: the requests of the keys they made. */
  memberId?: string;
  model?: string;
  outcome?: 'succeeded' | 'failed';
  limit: number;
}

export interface RequestLogStore {
  recordRefusals(refusals: readonly RefusedRequest[]): Promise<void>;
  /** Usage records and refused requests, newest first. */
  listRequestLog(accountId: string, query: RequestLogQuery): Promise<RequestLogEntry[]>;
  /** Deletes refused requests older than `beforeIso`; returns how many. */
  pruneRefusals(beforeIso: string): Promise<number>;
}
