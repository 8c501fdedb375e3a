// The rows of a request's counters in shared mode (counter-scripts.ts runs them): each names
// its Redis keys and two arguments, says how its state is read from the store when the
// script answers 'load' for it, and what the script's refusal of it means to the client.
import { RateLimitedError } from '../errors.js';
import type { SpendLimit } from '../billing/spend-limit.js';
import { AccountCreditRefusal, SpendLimitRefusal } from './credit-refusals.js';

export interface CounterRow {
  kind: 'slots' | 'rate' | 'balance' | 'budget';
  keys: readonly string[];
  a: string | number;
  b: string | number;
  /** Reads the row's state from the store, when the script answered 'load' for it. */
  load?: () => Promise<void>;
  /** The refusal the client gets, from the script's values for this row and the amount asked for. */
  refusal(values: readonly number[], amountMicros: number): Error;
}

/** Concurrent requests, held until settled (or the lease runs out). */
export function slotsRow(slots: string, limit: number): CounterRow {
  return {
    kind: 'slots',
    keys: [slots],
    a: limit,
    b: 0,
    refusal: () => new RateLimitedError({ limit, remaining: 0, resetAtUnixSec: Math.ceil(Date.now() / 1000) + 1 }, 1),
  };
}

/** A GCRA per minute (requests, tokens), `cost` taken; at settlement, `cost` added. */
export function rateRow(key: string, limit: number, cost: number): CounterRow {
  return {
    kind: 'rate',
    keys: [key],
    a: limit,
    b: cost,
    refusal: ([limitNow, remaining, resetAtUnixSec, retryAfterSec]) => new RateLimitedError({ limit: limitNow!, remaining: remaining!, resetAtUnixSec: resetAtUnixSec! }, retryAfterSec!),
  };
}

/**
 * The account's balance: available = stored − pending − reserved. With nothing available at
 * all the refusal names no amount, as before counting (requireCredit).
 */
export function balanceRow(keys: { credit: string; leases: string; amounts: string }, load: () => Promise<void>): CounterRow {
  return {
    kind: 'balance',
    keys: [keys.credit, keys.leases, keys.amounts],
    a: 0,
    b: 0,
    load,
    refusal: ([available, balance], amount) => new AccountCreditRefusal(available! <= 0 ? undefined : amount, available!, balance! <= 0),
  };
}

/** A limit on spending in a window (a key's credit limit, a budget): available = limit − spent − reserved. */
export function budgetRow(keys: { spend: string; leases: string; amounts: string }, limit: SpendLimit, window: string, load: () => Promise<void>): CounterRow {
  return {
    kind: 'budget',
    keys: [keys.spend, keys.leases, keys.amounts],
    a: limit.limit.amountMicros,
    b: window,
    load,
    refusal: ([available, unspent], amount) => new SpendLimitRefusal(limit, available! <= 0 ? undefined : amount, available!, unspent! <= 0),
  };
}

/** The rows as the scripts take them: their keys in turn, and four arguments each. */
export function rowsArguments(rows: readonly CounterRow[]): { keys: string[]; args: (string | number)[] } {
  const keys: string[] = [];
  const args: (string | number)[] = [];
  for (const row of rows) {
    keys.push(...row.keys);
    args.push(row.kind, row.keys.length, row.a, row.b);
  }
  return { keys, args };
}
