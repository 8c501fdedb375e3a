// What a request costs: prices are micro-credits per million tokens; costs round up and
// use BigInt for the product so no token count or price can lose precision.
import { checkMicros } from './money.js';

export interface Prices {
  inputPerMTokMicros: number;
  outputPerMTokMicros: number;
}

const TOKENS_PER_PRICE_UNIT = 1_000_000n;

export function costMicros(prices: Prices, promptTokens: number, completionTokens: number): number {
  const total = promptTokens * prices.inputPerMTokMicros + completionTokens * prices.outputPerMTokMicros;
  // Within 2^53 the products, the sum, % and the exact division below are exact in a
  // double (a plain total / 1e6 is not); BigInt only beyond.
  if (total <= Number.MAX_SAFE_INTEGER) {
    const remainder = total % 1_000_000;
    return (total - remainder) / 1_000_000 + (remainder > 0 ? 1 : 0);
  }
  const product =
    BigInt(promptTokens) * BigInt(prices.inputPerMTokMicros) + BigInt(completionTokens) * BigInt(prices.outputPerMTokMicros);
  const cost = (product + TOKENS_PER_PRICE_UNIT - 1n) / TOKENS_PER_PRICE_UNIT;
  return checkMicros(Number(cost));
}
