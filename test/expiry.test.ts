import { describe, expect, it } from 'vitest';
import { parseExpiry } from '../src/expiry.js';

const NOW = Date.parse('2030-06-15T12:00:00.000Z');

describe('parseExpiry', () => {
  it('a day is valid through its end, UTC: it stops at the next midnight', () => {
    expect(parseExpiry('2030-06-30', NOW)).toEqual({ expiresAt: '2030-07-01T00:00:00.000Z' });
    expect(parseExpiry('2030-12-31', NOW)).toEqual({ expiresAt: '2031-01-01T00:00:00.000Z' });
    // Today still has hours left.
    expect(parseExpiry('2030-06-15', NOW)).toEqual({ expiresAt: '2030-06-16T00:00:00.000Z' });
  });

  it('an ISO 8601 time is taken as it is, in UTC', () => {
    expect(parseExpiry('2030-06-30T12:00:00Z', NOW)).toEqual({ expiresAt: '2030-06-30T12:00:00.000Z' });
    expect(parseExpiry('2030-06-30T12:00:00+02:00', NOW)).toEqual({ expiresAt: '2030-06-30T10:00:00.000Z' });
  });

  it.each(['2030-02-30', '2030-13-01', 'soon', '30-06-2030', '2030-06-30 12:00', ''])('%j is not a date', (text) => {
    expect(parseExpiry(text, NOW)).toEqual({ problem: 'not_a_date' });
  });

  it('a moment not after now is past', () => {
    expect(parseExpiry('2030-06-14', NOW)).toEqual({ problem: 'past' });
    expect(parseExpiry('2030-06-15T12:00:00.000Z', NOW)).toEqual({ problem: 'past' });
  });
});
