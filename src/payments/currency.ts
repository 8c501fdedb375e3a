// Money at Stripe is an integer count of the currency's minor units (cents); credits are
// integer micro-credits. Config amounts (currency units) become minor units here, once,
// and minor units become credits with integer arithmetic only.
import { creditsToMicros } from '../money.js';
import type { StripeConfig } from '../config/schema.js';

// Stripe's zero-decimal currencies: an amount of 500 JPY is 500, not 50000.
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);

export class CurrencyRates {
  readonly currency: string;
  readonly minorPerUnit: number;
  private readonly microsPerUnit: bigint;

  constructor(config: Pick<StripeConfig, 'currency' | 'credits_per_unit'>) {
    this.currency = config.currency;
    this.minorPerUnit = ZERO_DECIMAL.has(config.currency) ? 1 : 100;
    this.microsPerUnit = BigInt(creditsToMicros(config.credits_per_unit));
  }

  /** A config amount in currency units → minor units; it must be a whole number of them. */
  minorOf(units: number): number {
    const minor = Math.round(units * this.minorPerUnit);
    if (Math.abs(minor - units * this.minorPerUnit) > 1e-6) throw new RangeError(`${units} ${this.currency} is not a whole number of minor units`);
    return minor;
  }

  /** The credits an amount buys, rounded down to a micro-credit. */
  creditsMicrosOf(amountMinor: number): number {
    return Number((BigInt(amountMinor) * this.microsPerUnit) / BigInt(this.minorPerUnit));
  }

  /** The share of `creditsMicros` that `partMinor` of `wholeMinor` stands for, rounded down. */
  static share(creditsMicros: number, partMinor: number, wholeMinor: number): number {
    if (wholeMinor <= 0) return 0;
    return Number((BigInt(creditsMicros) * BigInt(Math.min(partMinor, wholeMinor))) / BigInt(wholeMinor));
  }
}
