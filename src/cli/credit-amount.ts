// Credit amounts as operators type them (`5`, `0.25`, `-1.5`) and as the CLI prints them.
import { creditsToMicros, formatCredits } from '../money.js';
import { CliError } from './context.js';

/** Plain decimal notation only: no exponents, hex, Infinity or NaN, which Number() would accept. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
/** 1 micro-credit is the smallest amount stored. */
const MAX_DECIMALS = 6;

/**
 * Parses an amount of credits into micro-credits. Zero is always refused (a ledger entry
 * that moves nothing is a typo); negative amounts only when `signed`.
 */
export function parseCreditAmount(text: string | undefined, what: string, options: { signed: boolean }): number {
  if (text === undefined || text === '') throw new CliError(`${what} needs an amount of credits`);
  if (!DECIMAL.test(text)) throw new CliError(`${what}: ${JSON.stringify(text)} is not an amount of credits (e.g. 5 or 0.25)`);
  const decimals = text.split('.')[1]?.length ?? 0;
  if (decimals > MAX_DECIMALS) {
    throw new CliError(`${what}: ${text} has more than ${MAX_DECIMALS} decimals (the smallest amount is 0.000001 credits)`);
  }
  let micros: number;
  try {
    micros = creditsToMicros(Number(text));
  } catch {
    throw new CliError(`${what}: ${text} credits is too large`);
  }
  if (micros === 0) throw new CliError(`${what}: the amount must not be zero`);
  if (micros < 0 && !options.signed) throw new CliError(`${what}: the amount must be more than zero`);
  return micros;
}

/** A balance for people and for scripts: `balance` in credits, `balance_micros` exact. */
export function balanceFields(balanceMicros: number): { balance: string; balance_micros: number } {
  return { balance: formatCredits(balanceMicros), balance_micros: balanceMicros };
}
