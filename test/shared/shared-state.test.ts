// Shared mode's credit book and limits, with several instances' worth of SharedState (each
// its own Redis connection) over one PostgreSQL store and the local Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tier } from '../../src/billing/tiers.js';
import { InsufficientCreditsError, RateLimitedError } from '../../src/errors.js';
import { keySpendLimit, type SpendLimit } from '../../src/billing/spend-limit.js';
import { SharedAdmission } from '../../src/shared/shared-admission.js';
import { SpendLimitRefusal } from '../../src/shared/credit-refusals.js';
import { SharedState, type SharedReservation } from '../../src/shared/shared-state.js';
import { UsageStreamWriter } from '../../src/shared/usage-stream-writer.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { testRedis, type TestRedis } from '../helpers/redis.js';
import { plainRecord } from '../helpers/usage-record.js';

const INSTANCES = 4;
let database: TestDatabase;
let redis: TestRedis;
let stores: Store[];
let states: SharedState[];
let writers: UsageStreamWriter[];
let accountCounter = 0;

const tier = (config: Partial<Tier['config']> = {}): Tier =>
  ({ name: 'test', config: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 100_000, models: ['*'], subscription: false, price_month: 0, credits_month: 0, ...config } }) as Tier;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = testRedis();
  stores = Array.from({ length: INSTANCES }, () => openStore({ databaseUrl: database.url, sqlitePath: '/nonexistent' }));
  await stores[0]!.migrate();
  const onError = (err: unknown): void => {
    throw err;
  };
  states = stores.map((store) => new SharedState(redis.connect(), store, { prefix: redis.prefix, leaseMs: 1_000, onError }));
  writers = states.map((state, i) => new UsageStreamWriter(state, redis.connect(), stores[i]!, { consumer: `instance-${i}`, claimIdleMs: 1_000, onError: () => undefined }));
  for (const state of states) state.start();
  for (const writer of writers) await writer.start();
});

afterAll(async () => {
  for (const writer of writers) await writer.close();
  for (const state of states) state.stop();
  await Promise.all(stores.map((store) => store.close()));
  await redis.cleanup();
  await database.drop();
});

async function newAccount(micros: number): Promise<string> {
  const account = await stores[0]!.createAccount({ email: `shared${++accountCounter}@example.test`, tier: 'free' });
  if (micros > 0) await stores[0]!.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: micros, reason: 'test' });
  return account.id;
}

function record(accountId: string, costMicros: number, keyId = 'key_test'): UsageRecord {
  return plainRecord(accountId, costMicros, { keyId });
}

async function flushAll(): Promise<void> {
  for (const writer of writers) await writer.flush();
}

describe('credits across instances', () => {
  it('charge a cost above the hold in full from what is available, never another request’s hold, and cut only at 0', async () => {
    const accountId = await newAccount(1_000);
    const [one, two] = [states[0]!, states[1]!];
    const other = await two.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 300, takeRequest: true });
    const first = await one.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 100, takeRequest: true });
    await one.settle(first, tier(), 10, record(accountId, 500));
    expect(await one.snapshot(accountId)).toEqual({ balanceMicros: 500, reservedMicros: 300 });
    // 500 left, 300 of it held by the other request: a cost of 400 is charged 200.
    const last = await one.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 100, takeRequest: true });
    const unpaid = record(accountId, 400);
    await one.settle(last, tier(), 10, unpaid);
    await two.settle(other, tier(), 10, record(accountId, 300));
    await flushAll();
    const store = stores[0]!;
    expect(await store.balanceOf(accountId)).toBe(0);
    expect(await store.sumLedger(accountId)).toBe(0);
    const usage = await store.listUsage(accountId);
    expect(usage.map((row) => [row.costMicros, row.shortfallMicros]).sort((a, b) => a[0]! - b[0]!)).toEqual([
      [300, 0],
      [400, 200],
      [500, 0],
    ]);
    for (const state of states) expect(await state.snapshot(accountId)).toEqual({ balanceMicros: 0, reservedMicros: 0 });
  });

  it('never reserve more than the balance together: 2,000 concurrent spends over 4 instances', async () => {
    const cost = 1_000;
    const accountId = await newAccount(200 * cost + 500); // about a tenth of the spends
    const outcomes = await Promise.all(
      Array.from({ length: 2_000 }, async (_, i) => {
        const state = states[i % INSTANCES]!;
        let admission: SharedReservation;
        try {
          admission = await state.admit({ accountId, tier: tier(), promptTokens: 10, worstCaseMicros: cost, takeRequest: true });
        } catch (err) {
          if (err instanceof InsufficientCreditsError) return 'refused';
          throw err;
        }
        await state.settle(admission, tier(), 10, record(accountId, cost));
        return 'served';
      }),
    );
    const served = outcomes.filter((o) => o === 'served').length;
    expect(served).toBe(200);
    await flushAll();
    const store = stores[0]!;
    const usage = await store.listUsage(accountId, { limit: 10_000 });
    expect(usage).toHaveLength(200);
    expect(await store.balanceOf(accountId)).toBe(500);
    expect(await store.sumLedger(accountId)).toBe(500);
    const ledger = await store.listLedger(accountId, { limit: 10_000 });
    expect(ledger.filter((entry) => entry.kind === 'usage')).toHaveLength(200);
    expect(ledger.every((entry) => !entry.reason?.includes('capped'))).toBe(true);
    for (const state of states) expect(await state.snapshot(accountId)).toEqual({ balanceMicros: 500, reservedMicros: 0 });
  });

  it('settle a lease once: a retry whose first try ran (its reply lost) appends nothing and charges nothing more', async () => {
    // An instance of its own, under a prefix no writer reads: the stream keeps what it is given.
    const lone = new SharedState(redis.connect(), stores[0]!, { prefix: `${redis.prefix}-lone`, leaseMs: 1_000, onError: () => undefined });
    const accountId = await newAccount(10_000);
    const reservation = await lone.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1_000, takeRequest: true });
    const usage = record(accountId, 700);
    await lone.settle(reservation, tier(), 1, usage);
    reservation.settled = false; // as if the reply had been lost and the settlement tried again
    await lone.settle(reservation, tier(), 1, usage);
    expect(await lone.redis.xlen(lone.usageStream)).toBe(1);
    expect(await lone.snapshot(accountId)).toEqual({ balanceMicros: 10_000 - 700, reservedMicros: 0 });
    lone.stop();
  });

  it('releases the reservation of an instance that stopped renewing once its lease runs out', async () => {
    const accountId = await newAccount(10_000);
    const gone = new SharedState(redis.connect(), stores[0]!, { prefix: redis.prefix, leaseMs: 500, onError: () => undefined });
    await gone.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 10_000, takeRequest: true });
    // It never renews (never started) and never settles: as if killed.
    await expect(states[1]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1, takeRequest: true })).rejects.toBeInstanceOf(InsufficientCreditsError);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const admission = await states[1]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 10_000, takeRequest: true });
    await states[1]!.settle(admission, tier(), 0, record(accountId, 0));
    expect(await states[2]!.snapshot(accountId)).toEqual({ balanceMicros: 10_000, reservedMicros: 0 });
  });

  it('refuses an account whose credits running requests hold, and lets it in once they settle for less', async () => {
    const admission = new SharedAdmission(states[0]!, writers[0]!, () => undefined);
    const accountId = await newAccount(10_000);
    const holder = await states[1]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 10_000, takeRequest: true });
    const held = admission.open({ accountId, tier: tier() });
    held.requireCredit();
    await expect(held.admit({ promptTokens: 1, worstCaseMicros: 1 })).rejects.toBeInstanceOf(InsufficientCreditsError);
    // Settled for less than it held, with no balance change announced: credit is left.
    await states[1]!.settle(holder, tier(), 0, record(accountId, 4_000));
    const next = admission.open({ accountId, tier: tier() });
    next.requireCredit();
    const admitted = await next.admit({ promptTokens: 1, worstCaseMicros: 6_000 });
    expect(admitted.reservation.amountMicros).toBe(6_000);
    next.refuse();
  });

  it('refuses an account whose balance is spent before any round trip, until its balance changes', async () => {
    const admission = new SharedAdmission(states[0]!, writers[0]!, () => undefined);
    const accountId = await newAccount(1_000);
    const spender = await states[1]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1_000, takeRequest: true });
    await states[1]!.settle(spender, tier(), 0, record(accountId, 1_000));
    await expect(admission.open({ accountId, tier: tier() }).admit({ promptTokens: 1, worstCaseMicros: 1 })).rejects.toBeInstanceOf(InsufficientCreditsError);
    expect(() => admission.open({ accountId, tier: tier() }).requireCredit()).toThrow(InsufficientCreditsError);
    await flushAll();
    await stores[0]!.appendLedgerEntry({ accountId, kind: 'grant', amountMicros: 5_000, reason: 'top-up' });
    await admission.balanceChanged(accountId);
    expect(() => admission.open({ accountId, tier: tier() }).requireCredit()).not.toThrow();
  });

  it('keeps the leases of a live instance past their first expiry', async () => {
    const accountId = await newAccount(10_000);
    const admission = await states[0]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 10_000, takeRequest: true });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // longer than the 1 s lease; renewed meanwhile
    await expect(states[1]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1, takeRequest: true })).rejects.toBeInstanceOf(InsufficientCreditsError);
    await states[0]!.settle(admission, tier(), 0, record(accountId, 4_000));
    await flushAll();
    expect(await stores[0]!.balanceOf(accountId)).toBe(6_000);
    expect(await states[3]!.snapshot(accountId)).toEqual({ balanceMicros: 6_000, reservedMicros: 0 });
  });

  it('sees a grant made in the store once the balance is refreshed, and never counts a charge twice', async () => {
    const accountId = await newAccount(1_000);
    const admission = await states[0]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1_000, takeRequest: true });
    await states[0]!.settle(admission, tier(), 0, record(accountId, 700));
    await stores[2]!.appendLedgerEntry({ accountId, kind: 'grant', amountMicros: 5_000, reason: 'top-up' });
    await states[2]!.refreshBalance(accountId); // before the charge is stored: both count it, for a moment
    expect((await states[1]!.snapshot(accountId)).balanceMicros).toBeLessThanOrEqual(5_300);
    await flushAll();
    expect(await states[1]!.snapshot(accountId)).toEqual({ balanceMicros: 5_300, reservedMicros: 0 });
    expect(await stores[0]!.balanceOf(accountId)).toBe(5_300);
  });
  it('sends the admissions of one turn of the event loop as one script call, each decided after the one before', async () => {
    const accountId = await newAccount(5 * 1_000 + 500);
    const connection = redis.connect();
    const state = new SharedState(connection, stores[0]!, { prefix: redis.prefix, leaseMs: 1_000, onError: () => undefined });
    await state.refreshBalance(accountId); // the mirror exists: no admission needs a store read
    const sent: string[] = [];
    const sendCommand = connection.sendCommand.bind(connection);
    connection.sendCommand = (command, stream) => {
      sent.push(command.name);
      return sendCommand(command, stream);
    };
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () =>
        state.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1_000, takeRequest: true }).then(
          () => 'ok',
          (err: unknown) => (err instanceof InsufficientCreditsError ? 'refused' : Promise.reject(err)),
        ),
      ),
    );
    expect(sent).toEqual(['evalsha']);
    expect(outcomes).toEqual([...Array(5).fill('ok'), ...Array(5).fill('refused')]);
    expect(await state.snapshot(accountId)).toEqual({ balanceMicros: 5_500, reservedMicros: 5_000 });
  });
});

describe('limits across instances', () => {
  it('requests per minute is one limit however the requests are spread', async () => {
    const accountId = await newAccount(1_000_000);
    const limited = tier({ rpm: 30 });
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        states[i % INSTANCES]!.takeRequest(accountId, limited).then(
          () => 'ok',
          (err: unknown) => (err instanceof RateLimitedError ? 'limited' : Promise.reject(err)),
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(30);
  });

  it('concurrency slots are shared, and a settled request gives its slot back', async () => {
    const accountId = await newAccount(1_000_000);
    const two = tier({ concurrency: 2 });
    const first = await states[0]!.admit({ accountId, tier: two, promptTokens: 1, worstCaseMicros: 1, takeRequest: true });
    await states[1]!.admit({ accountId, tier: two, promptTokens: 1, worstCaseMicros: 1, takeRequest: true });
    await expect(states[2]!.admit({ accountId, tier: two, promptTokens: 1, worstCaseMicros: 1, takeRequest: true })).rejects.toBeInstanceOf(RateLimitedError);
    await states[0]!.settle(first, two, 0, record(accountId, 1));
    await states[2]!.admit({ accountId, tier: two, promptTokens: 1, worstCaseMicros: 1, takeRequest: true });
  });

  it('tokens per minute takes prompts at admission and completions at settlement', async () => {
    const accountId = await newAccount(1_000_000);
    const small = tier({ tpm: 100 });
    const admission = await states[0]!.admit({ accountId, tier: small, promptTokens: 60, worstCaseMicros: 1, takeRequest: true });
    await states[0]!.settle(admission, small, 30, record(accountId, 1));
    await expect(states[1]!.admit({ accountId, tier: small, promptTokens: 20, worstCaseMicros: 1, takeRequest: true })).rejects.toBeInstanceOf(RateLimitedError);
    await states[1]!.admit({ accountId, tier: small, promptTokens: 10, worstCaseMicros: 1, takeRequest: true });
  });
});

describe('keys’ credit limits across instances', () => {
  let keyCounter = 0;
  const limitedKey = (amountMicros: number, period: 'total' | 'month' = 'total'): SpendLimit & { keyId: string } => {
    const keyId = `key_limited_${++keyCounter}_${process.pid}`;
    return { ...keySpendLimit(keyId, { amountMicros, period }), keyId };
  };

  it('never hold more than a key’s limit together: 1,000 concurrent spends over 4 instances, each charged its worst case', async () => {
    const cost = 1_000;
    const accountId = await newAccount(1_000_000_000);
    const key = limitedKey(100 * cost + 500);
    const outcomes = await Promise.all(
      Array.from({ length: 1_000 }, async (_, i) => {
        const state = states[i % INSTANCES]!;
        let admission: SharedReservation;
        try {
          admission = await state.admit({ accountId, tier: tier(), promptTokens: 10, worstCaseMicros: cost, takeRequest: true, spendLimits: [key] });
        } catch (err) {
          if (err instanceof SpendLimitRefusal) return 'refused';
          throw err;
        }
        await state.settle(admission, tier(), 10, record(accountId, cost, key.keyId));
        return 'served';
      }),
    );
    expect(outcomes.filter((o) => o === 'served')).toHaveLength(100);
    for (const state of states) expect(await state.spend.spent(key)).toBe(100 * cost);
    await flushAll();
    expect(await stores[0]!.spendOf({ keyId: key.keyId }, null)).toBe(100 * cost);
    // What the key did not spend is still the account's.
    expect(await states[0]!.snapshot(accountId)).toEqual({ balanceMicros: 1_000_000_000 - 100 * cost, reservedMicros: 0 });
  });

  it('keeps a live instance’s holds on a key past their first expiry, and gives back those of one that stopped renewing', async () => {
    const accountId = await newAccount(1_000_000);
    const key = limitedKey(10_000);
    const live = await states[0]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 10_000, takeRequest: true, spendLimits: [key] });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // longer than the 1 s lease; renewed meanwhile
    const refused = await states[1]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1, takeRequest: true, spendLimits: [key] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(SpendLimitRefusal);
    expect(refused).toMatchObject({ availableMicros: 0, spent: false });
    await states[0]!.settle(live, tier(), 0, record(accountId, 4_000, key.keyId));

    const gone = new SharedState(redis.connect(), stores[0]!, { prefix: redis.prefix, leaseMs: 500, onError: () => undefined });
    await gone.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 6_000, takeRequest: true, spendLimits: [key] });
    // It never renews (never started) and never settles: as if killed.
    await expect(states[2]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1, takeRequest: true, spendLimits: [key] })).rejects.toBeInstanceOf(SpendLimitRefusal);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const admission = await states[2]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 6_000, takeRequest: true, spendLimits: [key] });
    await states[2]!.settle(admission, tier(), 0, record(accountId, 6_000, key.keyId));
    const spentAll = await states[3]!.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1, takeRequest: true, spendLimits: [key] }).catch((err: unknown) => err);
    expect(spentAll).toMatchObject({ availableMicros: 0, spent: true });
  });

  it('starts a key’s count with the charges still waiting in the usage stream, each counted once', async () => {
    // An instance of a deployment whose stream nobody reads: what it settles stays there.
    const state = new SharedState(redis.connect(), stores[0]!, { prefix: `${redis.prefix}:unread`, leaseMs: 1_000, onError: () => undefined });
    const accountId = await newAccount(1_000_000);
    const key = limitedKey(1_000_000, 'month');
    // Settled before the key had a limit: no count of it yet.
    const admission = await state.admit({ accountId, tier: tier(), promptTokens: 1, worstCaseMicros: 1_000, takeRequest: true });
    const waiting = record(accountId, 700, key.keyId);
    await state.settle(admission, tier(), 0, waiting);
    expect(await state.spend.spent(key)).toBe(700);
    // Stored, but not yet acknowledged (still in the stream): a new count has it once.
    await stores[0]!.recordUsage([waiting]);
    const total = { ...key, limit: { amountMicros: 1_000_000, period: 'total' as const } };
    expect(await state.spend.spent(total)).toBe(700);
  });
});
