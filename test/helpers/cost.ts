// Expected costs in tests: a model's input and output prices (the other kinds at their
// defaults: cached input and cache writes at the input price, reasoning at the output
// price) applied to plain prompt and completion counts.
import { costMicros as costOfUsage, type Prices } from '../../src/billing/pricing.js';

export function fullPrices({ inputPerMTokMicros, outputPerMTokMicros }: { inputPerMTokMicros: number; outputPerMTokMicros: number }): Prices {
  return {
    inputPerMTokMicros,
    cachedInputPerMTokMicros: inputPerMTokMicros,
    cacheWritePerMTokMicros: inputPerMTokMicros,
    cacheWrite1hPerMTokMicros: inputPerMTokMicros,
    outputPerMTokMicros,
    reasoningPerMTokMicros: outputPerMTokMicros,
  };
}

export function costMicros(prices: { inputPerMTokMicros: number; outputPerMTokMicros: number }, promptTokens: number, completionTokens: number): number {
  return costOfUsage(fullPrices(prices), { promptTokens, completionTokens });
}

/** An Anthropic-like price list with every kind at its own price (credits per million tokens), and the same in micro-credits. */
export const KIND_PRICE = { input: 3, cached_input: 0.3, cache_write: 3.75, cache_write_1h: 6, output: 15, reasoning: 20 };
export const KIND_PRICES: Prices = {
  inputPerMTokMicros: 3_000_000,
  cachedInputPerMTokMicros: 300_000,
  cacheWritePerMTokMicros: 3_750_000,
  cacheWrite1hPerMTokMicros: 6_000_000,
  outputPerMTokMicros: 15_000_000,
  reasoningPerMTokMicros: 20_000_000,
};
