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
