import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { outputTokensThatFit } from '../../src/billing/pricing.js';
import { costMicros, fullPrices } from '../helpers/cost.js';

describe('outputTokensThatFit', () => {
  it('is the most output tokens whose cost, rounded up with the prompt, stays within what is available', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 100_000_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 1, max: 1_000_000_000 }),
        (inputPerMTokMicros, outputPerMTokMicros, promptTokens, availableMicros) => {
          const prices = { inputPerMTokMicros, outputPerMTokMicros };
          const fit = outputTokensThatFit(fullPrices(prices), promptTokens, availableMicros);
          if (costMicros(prices, promptTokens, 0) > availableMicros) {
            expect(fit).toBe(-1);
            return;
          }
          expect(costMicros(prices, promptTokens, fit)).toBeLessThanOrEqual(availableMicros);
          expect(costMicros(prices, promptTokens, fit + 1)).toBeGreaterThan(availableMicros);
        },
      ),
    );
  });

  it('is unbounded when output is free', () => {
    expect(outputTokensThatFit(fullPrices({ inputPerMTokMicros: 1, outputPerMTokMicros: 0 }), 10, 1)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
