// The in-memory Admission on its own: limits, slots, reservations and release, against a
// real SQLite store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/billing/admission.js';
import { MemoryAdmission } from '../../src/billing/memory-admission.js';
import { MemorySpend } from '../../src/billing/memory-spend.js';
import { keySpendLimit } from '../../src/billing/spend-limit.js';
import { MemoryCreditBook } from '../../src/billing/reservations.js';
import type { Tier } from '../../src/billing/tiers.js';
import { UsageWriter } from '../../src/billing/usage-writer.js';
import type { TierConfig } from '../../src/config/schema.js';
import { InsufficientCreditsError, RateLimitedError } from '../../src/errors.js';
import { AccountLimits } from '../../src/limits/account-limits.js';
import { MemoryLimiter } from '../../src/limits/memory-limiter.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { plainRecord } from '../helpers/usage-record.js';

let dir: string;
let store: Store;
let book: MemoryCreditBook;
let admission: MemoryAdmission;
let principal: Principal;

function tier(overrides: Partial<TierConfig> = {}): Tier {
  const config: TierConfig = { rpm: 60, tpm: 1_000, concurrency: 2, models: ['*'], subscription: false, price_month: 0, credits_month: 0, price_multiplier: 1, ...overrides };
  return { name: 'test', config, multiplierPpm: 1_000_000, allowsModel: () => true };
}

function usage(costMicros: number, completionTokens = 5): { completionTokens: number; record: UsageRecord } {
  return { completionTokens, record: plainRecord(principal.accountId, costMicros, { completionTokens }) };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lmgate-admission-'));
  store = openStore({ sqlitePath: join(dir, 'lmgate.db') });
  await store.migrate();
  const account = await store.createAccount({ email: 'a@example.test', tier: 'free' });
  await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000 });
  book = new MemoryCreditBook(store);
  const writer = new UsageWriter(store, book, { onError: (err) => { throw err; } });
  admission = new MemoryAdmission(new AccountLimits(new MemoryLimiter(), new MemoryLimiter()), book, writer, new MemorySpend(store, writer));
  principal = { accountId: account.id, tier: tier() };
});
afterEach(async () => {
  await admission.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('in-memory admission', () => {
  it('admits with a reservation that has an id, and release charges the cost and frees the rest', async () => {
    const pass = admission.open(principal);
    await pass.requireCredit();
    const decision = await pass.admit({ promptTokens: 10, worstCaseMicros: 400 });
    expect(decision.reservation).toMatchObject({ accountId: principal.accountId, amountMicros: 400 });
    expect(decision.reservation.id).toMatch(/^rsv_/);
    expect(pass.reservedMicros).toBe(400);
    expect(await admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 1_000, reservedMicros: 400 });
    expect(book.openReservations).toBe(1);

    pass.release(usage(150));
    expect(await admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 850, reservedMicros: 0 });
    expect(book.openReservations).toBe(0);
    await admission.flush();
    expect(await store.balanceOf(principal.accountId)).toBe(850);
  });

  it('charges a cost above the hold in full from what else is available, never another request’s hold', async () => {
    await admission.snapshot(principal.accountId);
    const other = admission.open(principal);
    other.admit({ promptTokens: 1, worstCaseMicros: 300 });
    const pass = admission.open(principal);
    pass.admit({ promptTokens: 1, worstCaseMicros: 100 });
    const over = usage(500);
    pass.release(over);
    expect(over.record.shortfallMicros).toBe(0);
    expect(await admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 500, reservedMicros: 300 });

    // 500 left, 300 of it held by the other request: a cost of 400 gets 200, and records the rest as unpaid.
    const last = admission.open(principal);
    last.admit({ promptTokens: 1, worstCaseMicros: 100 });
    const unpaid = usage(400);
    last.release(unpaid);
    expect(unpaid.record.shortfallMicros).toBe(200);
    other.release(usage(300));
    expect(await admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 0, reservedMicros: 0 });
    await admission.flush();
    expect(await store.balanceOf(principal.accountId)).toBe(0);
    // The book agrees with the store once the charges are written.
    expect(await admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 0, reservedMicros: 0 });
    const stored = await store.listUsage(principal.accountId);
    expect(stored.map((record) => [record.costMicros, record.shortfallMicros]).sort((a, b) => a[0]! - b[0]!)).toEqual([
      [300, 0],
      [400, 200],
      [500, 0],
    ]);
  });

  it('is synchronous once the account is loaded: no promise on the request path', async () => {
    await admission.snapshot(principal.accountId); // loads the balance
    const pass = admission.open(principal);
    expect(pass.requireCredit()).toBeUndefined();
    const decision = pass.admit({ promptTokens: 1, worstCaseMicros: 1 });
    expect(decision).not.toBeInstanceOf(Promise);
    pass.release(usage(1));
  });

  it('refuses a worst case above what is available with 402, and at zero even a free request', async () => {
    await admission.snapshot(principal.accountId);
    const first = admission.open(principal);
    first.admit({ promptTokens: 1, worstCaseMicros: 800 });
    const second = admission.open(principal);
    expect(() => second.admit({ promptTokens: 1, worstCaseMicros: 300 })).toThrow(InsufficientCreditsError);
    second.refuse();
    first.release(usage(800));
    expect(await admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 200, reservedMicros: 0 });

    await store.appendLedgerEntry({ accountId: principal.accountId, kind: 'adjustment', amountMicros: -200 });
    await admission.flush();
    await admission.balanceChanged(principal.accountId);
    expect(() => admission.open(principal).requireCredit()).toThrow(InsufficientCreditsError);
  });

  it('holds one concurrency slot per open pass until release or refusal', async () => {
    await admission.snapshot(principal.accountId);
    const a = admission.open(principal);
    const b = admission.open(principal);
    expect(() => admission.open(principal)).toThrow(RateLimitedError);
    a.refuse();
    a.refuse(); // twice is harmless: the slot is not given back twice
    const c = admission.open(principal);
    expect(() => admission.open(principal)).toThrow(RateLimitedError);
    b.admit({ promptTokens: 1, worstCaseMicros: 1 });
    b.release(usage(1));
    c.refuse();
    expect(admission.limits(principal).concurrency).toMatchObject({ limit: 2, inUse: 0 });
  });

  it('takes prompt tokens at admission, gives them back on refusal, and adds output tokens at release', async () => {
    await admission.snapshot(principal.accountId);
    const refused = admission.open(principal);
    refused.admit({ promptTokens: 900, worstCaseMicros: 1 });
    refused.refuse();
    const pass = admission.open(principal);
    pass.admit({ promptTokens: 900, worstCaseMicros: 1 });
    pass.release(usage(1, 100));
    // 1,000 tokens per minute are now spent: the next prompt waits.
    expect(() => admission.open(principal).admit({ promptTokens: 50, worstCaseMicros: 1 })).toThrow(RateLimitedError);
  });

  it('counts requests per minute and refuses past the tier’s rpm with the state for the headers', () => {
    const narrow: Principal = { ...principal, tier: tier({ rpm: 2 }) };
    expect(admission.takeRequest(narrow)).toMatchObject({ limit: 2, remaining: 1 });
    expect(admission.takeRequest(narrow)).toMatchObject({ limit: 2, remaining: 0 });
    expect(() => admission.takeRequest(narrow)).toThrow(RateLimitedError);
  });
});

describe('a key’s credit limit in memory', () => {
  const limited = (amountMicros: number, period: 'total' | 'month' = 'total'): Principal => ({ ...principal, spendLimits: [keySpendLimit('key_test', { amountMicros, period })] });

  it('holds count: a request that would pass the limit with the running ones is refused, its account reservation given back', async () => {
    const keyed = limited(500);
    await admission.snapshot(principal.accountId);
    expect(await admission.spent(keyed.spendLimits![0]!)).toBe(0);
    const first = admission.open(keyed);
    expect(first.requireCredit()).toBeUndefined(); // loaded: synchronous
    expect(first.admit({ promptTokens: 1, worstCaseMicros: 300 })).not.toBeInstanceOf(Promise);

    const second = admission.open(keyed);
    let refusal: unknown;
    try {
      second.admit({ promptTokens: 1, worstCaseMicros: 300 });
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(InsufficientCreditsError);
    expect(refusal).toMatchObject({ reason: 'key_credit_limit', neededMicros: 300, availableMicros: 200 });
    second.refuse();
    expect(await admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 1_000, reservedMicros: 300 });

    first.release(usage(250));
    expect(admission.spent(keyed.spendLimits![0]!)).toBe(250);
    const third = admission.open(keyed);
    third.admit({ promptTokens: 1, worstCaseMicros: 250 });
    third.release(usage(250));
    // All of it spent: refused before counting, even for a request that would cost nothing.
    expect(() => admission.open(keyed).requireCredit()).toThrow(expect.objectContaining({ reason: 'key_credit_limit', availableMicros: 0, neededMicros: undefined }));
    // The account itself still has 500 available for its other keys.
    expect(admission.open(principal).admit({ promptTokens: 1, worstCaseMicros: 500 })).toMatchObject({ reservation: { amountMicros: 500 } });
  });

  it('reads a key’s spending from the store with the charges the writer has not written yet, each once', async () => {
    await store.recordUsage([usage(40).record]);
    const pass = admission.open(limited(1_000));
    await pass.requireCredit();
    await pass.admit({ promptTokens: 1, worstCaseMicros: 100 });
    pass.release(usage(100)); // queued, not yet written
    // Another period is another count, read afresh: the queued charge is in it.
    expect(await admission.spent(limited(1_000, 'month').spendLimits![0]!)).toBe(140);
    const fresh = new MemorySpend(store, new UsageWriter(store, book, { onError: (err) => { throw err; } }));
    expect(await fresh.spent(limited(1_000).spendLimits![0]!)).toBe(40); // another process sees only the store
    await admission.flush();
    expect(await new MemorySpend(store, new UsageWriter(store, book, { onError: (err) => { throw err; } })).spent(limited(1_000).spendLimits![0]!)).toBe(140);
    expect(admission.spent(limited(1_000, 'month').spendLimits![0]!)).toBe(140);
  });
});
