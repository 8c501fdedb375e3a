// Typed credits (the console's amounts, a key's credit limit): exact micro-credits from the digits, never a float, and back.
import { describe, expect, it } from 'vitest';
import { creditsInputToMicros, microsToCreditsInput } from '../../web/src/credit-input.js';

describe('credits typed in the console', () => {
  it.each([
    ['5', 5_000_000],
    ['7.5', 7_500_000],
    [' 0.000001 ', 1],
    ['0.1', 100_000],
    ['1234567.891011', 1_234_567_891_011],
  ])('reads %j as %d micro-credits', (text, micros) => {
    expect(creditsInputToMicros(text, { signed: false })).toBe(micros);
  });

  it('reads a negative amount only where one is allowed (an adjustment)', () => {
    expect(creditsInputToMicros('-2.25', { signed: true })).toBe(-2_250_000);
    expect(creditsInputToMicros('-2.25', { signed: false })).toBeNull();
  });

  it.each(['', '0', '0.0', '1.2345678', '1e3', '1,5', 'abc', '--1', '.5', '9007199254.740992'])('refuses %j', (text) => {
    expect(creditsInputToMicros(text, { signed: true })).toBeNull();
  });

  it.each([
    [25_000_000, '25'],
    [500_000, '0.5'],
    [1, '0.000001'],
    [1_234_567_891_011, '1234567.891011'],
  ])('writes %d micro-credits as %j, which reads back the same', (micros, text) => {
    expect(microsToCreditsInput(micros)).toBe(text);
    expect(creditsInputToMicros(text, { signed: false })).toBe(micros);
  });
});
