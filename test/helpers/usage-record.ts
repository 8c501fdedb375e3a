// The fields of a usage record that most tests do not care about: a reported, completed
// answer with no token kinds beyond its totals and nothing left unpaid; and such a record.
import { newTimeOrderedId } from '../../src/ids.js';
import type { UsageRecord } from '../../src/store/store.js';

export const PLAIN_USAGE: Pick<UsageRecord, 'cachedTokens' | 'cacheWriteTokens' | 'cacheWrite1hTokens' | 'reasoningTokens' | 'basis' | 'outcome' | 'shortfallMicros' | 'heldMicros'> = {
  cachedTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
  basis: 'reported',
  outcome: 'completed',
  shortfallMicros: 0,
  heldMicros: 0,
};

/** A plain record of a 10-token prompt and `completionTokens` of output, costing `costMicros`, dated now. */
export function plainRecord(accountId: string, costMicros: number, options: { keyId?: string; completionTokens?: number } = {}): UsageRecord {
  return {
    id: newTimeOrderedId('usage'),
    requestId: `req_${Math.random().toString(36).slice(2)}`,
    accountId,
    keyId: options.keyId ?? 'key_test',
    model: 'test-model',
    promptTokens: 10,
    ...PLAIN_USAGE,
    completionTokens: options.completionTokens ?? 10,
    costMicros,
    latencyMs: 1,
    status: 200,
    streamed: false,
    finishReason: 'stop',
    memberId: null,
    createdAt: new Date().toISOString(),
  };
}
