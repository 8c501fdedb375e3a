// Usage batches of two instances landing in the store out of step: a balance read never
// counts a charge twice (in the store's balance and still pending) nor misses one. One
// writer is held between its commit and its acknowledgement while the other writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tier } from '../../src/billing/tiers.js';
import { SharedState } from '../../src/shared/shared-state.js';
import { UsageStreamWriter } from '../../src/shared/usage-stream-writer.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { testRedis, type TestRedis } from '../helpers/redis.js';
import { plainRecord } from '../helpers/usage-record.js';

let database: TestDatabase;
let redis: TestRedis;
let store: Store;
const closing: (() => Promise<void> | void)[] = [];

const tier = { name: 'test', config: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 1_000, models: ['*'], subscription: false, price_month: 0, credits_month: 0 } } as Tier;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = testRedis();
  store = openStore({ databaseUrl: database.url, sqlitePath: '/nonexistent' });
  await store.migrate();
});

afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await store.close();
  await redis.cleanup();
  await database.drop();
});

/** A store whose transactions, once committed, wait for `open()` before they return. */
function heldAfterCommit(target: Store): { store: Store; committed: Promise<void>; open: () => void } {
  let committed!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (committed = resolve));
  const gate = new Promise<void>((resolve) => (open = resolve));
  const held = new Proxy(target, {
    get(of, property) {
      if (property === 'transaction') {
        return async <T>(fn: (tx: Store) => Promise<T>): Promise<T> => {
          const result = await of.transaction(fn);
          committed();
          await gate;
          return result;
        };
      }
      const value: unknown = Reflect.get(of, property, of);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(of) : value;
    },
  });
  return { store: held, committed: reached, open };
}

async function instance(name: string, instanceStore: Store): Promise<{ state: SharedState; writer: UsageStreamWriter }> {
  const state = new SharedState(redis.connect(), instanceStore, { prefix: redis.prefix, leaseMs: 5_000, onError: () => undefined });
  const writer = new UsageStreamWriter(state, redis.connect(), instanceStore, { consumer: name, claimIdleMs: 60_000, onError: () => undefined });
  await writer.start();
  closing.push(() => writer.close());
  return { state, writer };
}

async function spend(state: SharedState, accountId: string, costMicros: number): Promise<void> {
  const reservation = await state.admit({ accountId, tier, promptTokens: 1, worstCaseMicros: costMicros, takeRequest: true });
  await state.settle(reservation, tier, 0, plainRecord(accountId, costMicros));
}

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('usage batches acknowledged out of the order they were committed in', () => {
  it('count each charge once in every read, before, between and after the acknowledgements', async () => {
    const account = await store.createAccount({ email: 'batches@example.test', tier: 'free' });
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 10_000, reason: 'test' });
    const held = heldAfterCommit(openStore({ databaseUrl: database.url, sqlitePath: '/nonexistent' }));
    const slow = await instance('slow', held.store);
    closing.push(() => held.store.close());
    closing.push(held.open); // first, should the test fail while the writer waits

    // The slow writer commits the first charge, then waits before acknowledging it.
    await spend(slow.state, account.id, 700);
    await held.committed;
    expect(await store.balanceOf(account.id)).toBe(9_300);
    expect(await slow.state.snapshot(account.id)).toEqual({ balanceMicros: 9_300, reservedMicros: 0 });
    // A grant read meanwhile is kept until no batch is open: it may not show yet, and must not be lost.
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000, reason: 'top-up' });
    await slow.state.refreshBalance(account.id);
    expect([9_300, 10_300]).toContain((await slow.state.snapshot(account.id)).balanceMicros);

    // Another writer commits the second charge after it, so its balance includes the first,
    // and acknowledges it while the first is still pending.
    const quick = await instance('quick', store);
    await spend(quick.state, account.id, 300);
    await waitFor(async () => (await store.balanceOf(account.id)) === 10_000 && (await redis.connect().xlen(quick.state.usageStream)) === 1);
    expect(await store.balanceOf(account.id)).toBe(10_000);
    expect([9_000, 10_000]).toContain((await quick.state.snapshot(account.id)).balanceMicros);
    // A balance read from the store meanwhile (a grant elsewhere, a new instance) has both charges too.
    await quick.state.refreshBalance(account.id);
    expect([9_000, 10_000]).toContain((await quick.state.snapshot(account.id)).balanceMicros);

    held.open();
    await slow.writer.flush();
    expect(await slow.state.snapshot(account.id)).toEqual({ balanceMicros: 10_000, reservedMicros: 0 });
    await quick.state.refreshBalance(account.id);
    expect(await quick.state.snapshot(account.id)).toEqual({ balanceMicros: 10_000, reservedMicros: 0 });
    // Nothing left pending once the store's balance is read after both.
    const [pending] = await redis.connect().hmget(quick.state.keys(account.id).credit, 'pending');
    expect(Number(pending)).toBe(0);
  });
});
