import { afterEach, describe, expect, it, vi } from 'vitest';
import { base36Now, isoNow } from '../../src/clock.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('clock', () => {
  it('follows the time from one millisecond to the next, and its base-36 form sorts like it', () => {
    vi.useFakeTimers();
    const seen: [string, string][] = [];
    for (const at of ['2026-11-24T03:00:00.000Z', '2026-11-24T03:00:00.000Z', '2026-11-24T03:00:00.001Z', '2027-01-01T00:00:09.999Z']) {
      vi.setSystemTime(new Date(at));
      expect(isoNow()).toBe(at);
      expect(parseInt(base36Now(), 36)).toBe(Date.parse(at));
      seen.push([isoNow(), base36Now()]);
    }
    expect(seen.map(([, b36]) => b36)).toEqual([...seen.map(([, b36]) => b36)].sort());
    expect(new Set(seen.map(([, b36]) => b36.length))).toEqual(new Set([9]));
  });
});
