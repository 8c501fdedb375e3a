import { describe, expect, it } from 'vitest';
import { creditsToMicros, formatCredits } from '../../src/billing/money.js';
import { costMicros } from '../helpers/cost.js';

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
});
