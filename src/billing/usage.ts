// The tokens a request used, by kind: what a backend reports and what is billed.
//
// Totals follow OpenAI's convention: `promptTokens` is every input token (cached and
// cache-written ones included) and `completionTokens` every output token (reasoning
// included). The kinds below are parts of those totals, each priced on its own
// (pricing.ts). Anthropic reports its cache reads and writes beside `input_tokens`, not
// inside it; its reader adds them in.
import type { UsageBasis } from '../store/usage-basis.js';

export interface Usage {
  /** Every input token, cached and cache-written ones included. */
  promptTokens: number;
  /** Every output token, reasoning included. */
  completionTokens: number;
  /** Of `promptTokens`: read from the provider's prompt cache. */
  cachedTokens?: number;
  /** Of `promptTokens`: written to the cache (Anthropic's 5-minute writes, or writes of unstated life). */
  cacheWriteTokens?: number;
  /** Of `promptTokens`: written to the cache for an hour (Anthropic's `ephemeral_1h`). */
  cacheWrite1hTokens?: number;
  /** Of `completionTokens`: reasoning. */
  reasoningTokens?: number;
  /** Absent: reported (a demo model's counts are its own report). */
  basis?: UsageBasis;
}

/**
 * OpenAI's usage shape counts every cache write in `cache_write_tokens`; lmgate adds
 * `cache_write_1h_tokens`, the part written for an hour (Anthropic's `ephemeral_1h`), so
 * that the usage it shows prices to the cost beside it. The part is cut to the whole.
 */
export function splitCacheWrites(usage: Usage, oneHourTokens: number): void {
  const written = usage.cacheWriteTokens ?? 0;
  const oneHour = Math.min(oneHourTokens, written);
  if (oneHour <= 0) return;
  usage.cacheWrite1hTokens = oneHour;
  if (written - oneHour > 0) usage.cacheWriteTokens = written - oneHour;
  else delete usage.cacheWriteTokens;
}

/** The input tokens billed at the plain input price: the total less its cached and cache-written parts. */
export function plainInputTokens(usage: Usage): number {
  return usage.promptTokens - (usage.cachedTokens ?? 0) - (usage.cacheWriteTokens ?? 0) - (usage.cacheWrite1hTokens ?? 0);
}

/**
 * A usage whose parts fit their totals. An upstream that reports more cached than prompt
 * tokens (or more reasoning than output) is trusted for its totals, and its parts are cut
 * to them: a part never makes a charge negative or larger than the totals' worth.
 */
export function consistentUsage(usage: Usage): Usage {
  const { promptTokens, completionTokens } = usage;
  let room = promptTokens;
  const part = (value: number | undefined): number | undefined => {
    if (value === undefined || value <= 0) return undefined;
    const kept = Math.min(value, room);
    room -= kept;
    return kept;
  };
  const cachedTokens = part(usage.cachedTokens);
  const cacheWriteTokens = part(usage.cacheWriteTokens);
  const cacheWrite1hTokens = part(usage.cacheWrite1hTokens);
  const reasoning = usage.reasoningTokens === undefined || usage.reasoningTokens <= 0 ? undefined : Math.min(usage.reasoningTokens, completionTokens);
  const result: Usage = { promptTokens, completionTokens };
  if (cachedTokens) result.cachedTokens = cachedTokens;
  if (cacheWriteTokens) result.cacheWriteTokens = cacheWriteTokens;
  if (cacheWrite1hTokens) result.cacheWrite1hTokens = cacheWrite1hTokens;
  if (reasoning) result.reasoningTokens = reasoning;
  if (usage.basis === 'counted') result.basis = 'counted';
  return result;
}
