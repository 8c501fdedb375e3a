// Money is integer micro-credits (1 credit = 1,000,000) held in safe-integer numbers.
// Floats appear only where people type or read amounts, and are converted here.

export const MICROS_PER_CREDIT = 1_000_000;

/** Credits as typed by an operator or written in config (decimals allowed) → micros. */
export function creditsToMicros(credits: number): number {
  if (!Number.isFinite(credits)) throw new RangeError(`not a credit amount: ${credits}`);
  return checkMicros(Math.round(credits * MICROS_PER_CREDIT));
}

/** Throws when a value is not a safe integer amount (e.g. a corrupt row or an overflow). */
export function checkMicros(micros: number): number {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`not a safe micro-credit amount: ${micros}`);
  return micros;
}

/**
 * Credits as a JSON number (wire fields such as `usage.cost`). The quotient of an integer
 * by 10^6 prints as its exact decimal: that decimal, at most 6 places, is the shortest
 * text that reads back as the same double.
 */
export function microsToCredits(micros: number): number {
  return micros / MICROS_PER_CREDIT;
}

/** For people, and as JSON number text: 1234567 → "1.234567". */
export function formatCredits(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_CREDIT);
  const fraction = String(abs % MICROS_PER_CREDIT).padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}
