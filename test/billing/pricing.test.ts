import { describe, expect, it } from 'vitest';
import { creditsToMicros, formatCredits } from '../../src/money.js';
import { costMicros as costOfUsage, holdPrices, outputTokensThatFit } from '../../src/billing/pricing.js';
import { costMicros } from '../helpers/cost.js';
import { KIND_PRICES } from '../helpers/cost.js';

describe('pricing', () => {
  it('charges per million tokens and rounds up to the next micro-credit', () => {
    const prices = { inputPerMTokMicros: creditsToMicros(0.1), outputPerMTokMicros: creditsToMicros(0.4) };
    // 0.1 credits per 1M input tokens = 0.1 micro-credits per token: 7 tokens cost 0.7 → 1.
    expect(costMicros(prices, 7, 0)).toBe(1);
    expect(costMicros(prices, 10, 0)).toBe(1);
    expect(costMicros(prices, 11, 0)).toBe(2);
    expect(costMicros(prices, 1_000_000, 1_000_000)).toBe(500_000);
    expect(costMicros(prices, 0, 0)).toBe(0);
  });

  it('keeps exact integers where floats would drift', () => {
    const prices = { inputPerMTokMicros: 3_000_001, outputPerMTokMicros: 7_000_003 };
    const expected = (123_456_789n * 3_000_001n + 987_654_321n * 7_000_003n + 999_999n) / 1_000_000n;
    expect(costMicros(prices, 123_456_789, 987_654_321)).toBe(Number(expected));
  });

  it('takes the BigInt path beyond 2^53 and agrees with it below', () => {
    const prices = { inputPerMTokMicros: 9_000_000_000_000, outputPerMTokMicros: 1 };
    const expected = (5_000_000n * 9_000_000_000_000n + 3n + 999_999n) / 1_000_000n;
    expect(costMicros(prices, 5_000_000, 3)).toBe(Number(expected));
    for (const [p, c] of [[999_999, 1], [1_000_000, 0], [1_000_001, 0], [4_503_599_627, 1]] as const) {
      const small = { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 999_999 };
      const big = (BigInt(p) * 1_000_000n + BigInt(c) * 999_999n + 999_999n) / 1_000_000n;
      expect(costMicros(small, p, c)).toBe(Number(big));
    }
  });

  it('converts and formats credits', () => {
    expect(creditsToMicros(2.5)).toBe(2_500_000);
    expect(creditsToMicros(0.000001)).toBe(1);
    expect(formatCredits(1_234_567)).toBe('1.234567');
    expect(formatCredits(-2_500_000)).toBe('-2.5');
    expect(formatCredits(3_000_000)).toBe('3');
    expect(() => creditsToMicros(Number.NaN)).toThrow(RangeError);
  });

  it('prices every kind of token at its own price: cached input, cache writes by lifetime, reasoning', () => {
    const prices = KIND_PRICES;
    // 1,000 prompt tokens: 100 plain, 500 read from the cache, 300 written for 5 minutes, 100 for an hour;
    // 400 output tokens, 150 of them reasoning.
    const usage = { promptTokens: 1_000, completionTokens: 400, cachedTokens: 500, cacheWriteTokens: 300, cacheWrite1hTokens: 100, reasoningTokens: 150 };
    const exact = 100 * 3_000_000 + 500 * 300_000 + 300 * 3_750_000 + 100 * 6_000_000 + 250 * 15_000_000 + 150 * 20_000_000;
    expect(costOfUsage(prices, usage)).toBe(Math.ceil(exact / 1_000_000));
    // Without parts, every input token is plain and every output token plain output.
    expect(costOfUsage(prices, { promptTokens: 1_000, completionTokens: 400 })).toBe(Math.ceil((1_000 * 3_000_000 + 400 * 15_000_000) / 1_000_000));
  });

  it('scales by the tier’s and the account’s multipliers (parts per million), rounding up once', () => {
    const prices = { inputPerMTokMicros: 1_000_000, cachedInputPerMTokMicros: 1_000_000, cacheWritePerMTokMicros: 1_000_000, cacheWrite1hPerMTokMicros: 1_000_000, outputPerMTokMicros: 3_000_000, reasoningPerMTokMicros: 3_000_000 };
    const usage = { promptTokens: 1_234, completionTokens: 567 };
    const base = 1_234 * 1_000_000 + 567 * 3_000_000; // micro-credits × 10^6
    // A 20 % markup on the tier and a 10 % discount for the account: × 1.08.
    const scaled = (BigInt(base) * 1_200_000n * 900_000n + 10n ** 18n - 1n) / 10n ** 18n;
    expect(costOfUsage(prices, usage, { tierPpm: 1_200_000, accountPpm: 900_000 })).toBe(Number(scaled));
    expect(costOfUsage(prices, usage, { tierPpm: 1_000_000, accountPpm: 1_000_000 })).toBe(Math.ceil(base / 1_000_000));
    // What fits in a balance agrees with the scaled cost.
    const fit = outputTokensThatFit(prices, 1_234, 5_000, { tierPpm: 1_200_000, accountPpm: 900_000 });
    expect(costOfUsage(prices, { promptTokens: 1_234, completionTokens: fit }, { tierPpm: 1_200_000, accountPpm: 900_000 })).toBeLessThanOrEqual(5_000);
    expect(costOfUsage(prices, { promptTokens: 1_234, completionTokens: fit + 1 }, { tierPpm: 1_200_000, accountPpm: 900_000 })).toBeGreaterThan(5_000);
  });

  it('holds at the dearest price of each side: a prompt may be written to the cache, output may be reasoning', () => {
    const prices = { inputPerMTokMicros: 3, cachedInputPerMTokMicros: 1, cacheWritePerMTokMicros: 4, cacheWrite1hPerMTokMicros: 6, outputPerMTokMicros: 15, reasoningPerMTokMicros: 20 };
    expect(holdPrices(prices)).toEqual({ inputPerMTokMicros: 6, cachedInputPerMTokMicros: 6, cacheWritePerMTokMicros: 6, cacheWrite1hPerMTokMicros: 6, outputPerMTokMicros: 20, reasoningPerMTokMicros: 20 });
  });
});
