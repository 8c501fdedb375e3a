// The fields of a usage record that most tests do not care about: a reported, completed
// answer with no token kinds beyond its totals and nothing left unpaid.
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
