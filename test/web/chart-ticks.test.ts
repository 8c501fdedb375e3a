// The value axis of the usage charts: round steps from 0 past the highest bar.
import { describe, expect, it } from 'vitest';
import { niceTicks } from '../../web/src/chart-ticks.js';

describe('chart ticks', () => {
  it.each([
    [4, [0, 1, 2, 3, 4]],
    [5, [0, 2, 4, 6]],
    [2_470, [0, 1_000, 2_000, 3_000]],
    [2_443, [0, 1_000, 2_000, 3_000]],
    [13_877, [0, 5_000, 10_000, 15_000]],
    [1, [0, 1]],
  ])('up to %d: %j', (max, ticks) => {
    expect(niceTicks(max, 4)).toEqual(ticks);
  });

  it('end at the empty axis’s top when every value is 0', () => {
    expect(niceTicks(0, 10_000)).toEqual([0, 5_000, 10_000]);
    expect(niceTicks(0, 4)).toEqual([0, 1, 2, 3, 4]);
  });
});
