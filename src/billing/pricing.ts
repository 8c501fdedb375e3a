// What a request costs: prices are micro-credits per million tokens, one per token kind;
// a tier's and an account's price multipliers (parts per million) scale the sum. Costs
// round up once, on the whole sum, and use BigInt where a double could lose precision.
import { checkMicros } from '../money.js';
import { plainInputTokens, type Usage } from './usage.js';

export interface Prices {
  inputPerMTokMicros: number;
  cachedInputPerMTokMicros: number;
  cacheWritePerMTokMicros: number;
  cacheWrite1hPerMTokMicros: number;
  outputPerMTokMicros: number;
  reasoningPerMTokMicros: number;
}

/** A multiplier in parts per million: 1,000,000 is the price as configured. */
export const UNIT_MULTIPLIER_PPM = 1_000_000;

/** The multipliers a request's prices are scaled by: its tier's and its account's. */
export interface PriceScale {
  tierPpm: number;
  accountPpm: number;
}

/** A multiplier as people write it (1.2, 0.9) in parts per million; RangeError past 6 decimals or outside (0, 1000]. */
export function multiplierPpm(multiplier: number): number {
  const ppm = Math.round(multiplier * 1_000_000);
  if (!Number.isFinite(multiplier) || multiplier <= 0 || multiplier > 1_000 || Math.abs(multiplier * 1_000_000 - ppm) > 1e-6) {
    throw new RangeError('a price multiplier is a number above 0 and at most 1000, with at most 6 decimal places');
  }
  return ppm;
}

export const UNSCALED: PriceScale = { tierPpm: UNIT_MULTIPLIER_PPM, accountPpm: UNIT_MULTIPLIER_PPM };

const TOKENS_PER_PRICE_UNIT = 1_000_000n;
const PPM = 1_000_000n;

/** The cost of `usage`, every kind at its own price, scaled, rounded up. */
export function costMicros(prices: Prices, usage: Usage, scale: PriceScale = UNSCALED): number {
  // Called twice per request (the in-band cost and the charge): plain arithmetic, no arrays.
  const cached = usage.cachedTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const written1h = usage.cacheWrite1hTokens ?? 0;
  const reasoning = usage.reasoningTokens ?? 0;
  const plainInput = plainInputTokens(usage);
  const plainOutput = usage.completionTokens - reasoning;
  const unscaled = scale.tierPpm === UNIT_MULTIPLIER_PPM && scale.accountPpm === UNIT_MULTIPLIER_PPM;
  if (unscaled) {
    const total =
      plainInput * prices.inputPerMTokMicros +
      cached * prices.cachedInputPerMTokMicros +
      written * prices.cacheWritePerMTokMicros +
      written1h * prices.cacheWrite1hPerMTokMicros +
      plainOutput * prices.outputPerMTokMicros +
      reasoning * prices.reasoningPerMTokMicros;
    // Within 2^53 the products, the sum, % and the exact division below are exact in a
    // double (a plain total / 1e6 is not); BigInt only beyond.
    if (total <= Number.MAX_SAFE_INTEGER) {
      const remainder = total % 1_000_000;
      return (total - remainder) / 1_000_000 + (remainder > 0 ? 1 : 0);
    }
  }
  let product =
    BigInt(plainInput) * BigInt(prices.inputPerMTokMicros) +
    BigInt(cached) * BigInt(prices.cachedInputPerMTokMicros) +
    BigInt(written) * BigInt(prices.cacheWritePerMTokMicros) +
    BigInt(written1h) * BigInt(prices.cacheWrite1hPerMTokMicros) +
    BigInt(plainOutput) * BigInt(prices.outputPerMTokMicros) +
    BigInt(reasoning) * BigInt(prices.reasoningPerMTokMicros);
  const divisor = unscaled ? TOKENS_PER_PRICE_UNIT : TOKENS_PER_PRICE_UNIT * PPM * PPM;
  if (!unscaled) product *= BigInt(scale.tierPpm) * BigInt(scale.accountPpm);
  return checkMicros(Number((product + divisor - 1n) / divisor));
}

/**
 * The prices a hold is made at: every input token at the dearest input kind (a prompt may
 * be written to the cache) and every output token at the dearer of output and reasoning.
 */
export function holdPrices(prices: Prices): Prices {
  const input = Math.max(prices.inputPerMTokMicros, prices.cachedInputPerMTokMicros, prices.cacheWritePerMTokMicros, prices.cacheWrite1hPerMTokMicros);
  const output = Math.max(prices.outputPerMTokMicros, prices.reasoningPerMTokMicros);
  return {
    inputPerMTokMicros: input,
    cachedInputPerMTokMicros: input,
    cacheWritePerMTokMicros: input,
    cacheWrite1hPerMTokMicros: input,
    outputPerMTokMicros: output,
    reasoningPerMTokMicros: output,
  };
}

/**
 * The most output tokens whose cost, with `promptTokens` of plain input, is within
 * `availableMicros`: costs round up, so the exact scaled sum must not pass available × the
 * divisor. -1 when the prompt alone does not fit; unbounded output when it is free.
 */
export function outputTokensThatFit(prices: Prices, promptTokens: number, availableMicros: number, scale: PriceScale = UNSCALED): number {
  const scaleProduct = BigInt(scale.tierPpm) * BigInt(scale.accountPpm);
  // (prompt × in + out × o) × scale ≤ available × 10^18  ⇔  prompt × in + out × o ≤ ⌊available × 10^18 / scale⌋
  const budget = scaleProduct === 0n ? null : (BigInt(availableMicros) * TOKENS_PER_PRICE_UNIT * PPM * PPM) / scaleProduct;
  if (budget === null) return Number.MAX_SAFE_INTEGER;
  const room = budget - BigInt(promptTokens) * BigInt(prices.inputPerMTokMicros);
  if (room < 0n) return -1;
  if (prices.outputPerMTokMicros === 0) return Number.MAX_SAFE_INTEGER;
  const fit = room / BigInt(prices.outputPerMTokMicros);
  return fit > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(fit);
}
