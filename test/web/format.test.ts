// How the dashboard words expiries and lines up columns of credits.
import { describe, expect, it } from 'vitest';
import { creditsColumn, formatExpiry, formatRefusalReason } from '../../web/src/format.js';

describe('expiries', () => {
  it('a day given as the last day reads as that day, whichever end of it was stored', () => {
    expect(formatExpiry('2027-01-01T00:00:00.000Z')).toBe('Dec 31, 2026, end of day (UTC)');
    expect(formatExpiry('2026-12-31T23:59:59.999Z')).toBe('Dec 31, 2026, end of day (UTC)');
  });
});

describe('a column of credits', () => {
  it('gives every amount the decimals of the most precise one, at least two', () => {
    const format = creditsColumn([360, 982, 8]);
    expect([360, 982, 8].map(format)).toEqual(['0.000360', '0.000982', '0.000008']);
    expect(creditsColumn([5_000_000, 0])(5_000_000)).toBe('5.00');
    expect(creditsColumn([1_500_000, 12_340_000])(1_500_000)).toBe('1.50');
    expect(creditsColumn([])(1_000)).toBe('0.001');
  });
});

describe('a refusal reason', () => {
  it('names the fields a 422 named, and reads reasons it does not know', () => {
    expect(formatRefusalReason('validation_failed:messages')).toBe('Invalid request: messages');
    expect(formatRefusalReason('validation_failed:messages,temperature')).toBe('Invalid request: messages, temperature');
    expect(formatRefusalReason('validation_failed')).toBe('Invalid request');
    expect(formatRefusalReason('model_not_in_tier')).toBe('Model not in your plan');
    expect(formatRefusalReason('something_new')).toBe('Something new');
  });
});
