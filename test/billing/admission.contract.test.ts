// The Admission port's contract, run against both implementations: in memory on a SQLite
// store, and shared mode on PostgreSQL and Redis. The same cases, the same answers; where
// the two decide at different steps (a concurrency slot: at open in memory, at admit in
// shared mode), a case takes open and admit as one step, as the request path does.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionService, Pass, Principal, RequestPlan } from '../../src/billing/admission.js';
import { MemoryAdmission } from '../../src/billing/memory-admission.js';
import { MemorySpend } from '../../src/billing/memory-spend.js';
import { keySpendLimit } from '../../src/billing/spend-limit.js';
import { MemoryCreditBook } from '../../src/billing/reservations.js';
import type { Tier } from '../../src/billing/tiers.js';
import { UsageWriter } from '../../src/billing/usage-writer.js';
import { loadConfig } from '../../src/config/load.js';
import type { TierConfig } from '../../src/config/schema.js';
import { InsufficientCreditsError, RateLimitedError } from '../../src/errors.js';
import { AccountLimits } from '../../src/limits/account-limits.js';
import { MemoryLimiter } from '../../src/limits/memory-limiter.js';
import { openSharedMode } from '../../src/shared/connect.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { TEST_REDIS_URL, testRedis } from '../helpers/redis.js';
import { plainRecord } from '../helpers/usage-record.js';

interface Implementation {
  admission: AdmissionService;
  store: Store;
  close(): Promise<void>;
}

const IMPLEMENTATIONS: { name: string; open(): Promise<Implementation> }[] = [
  {
    name: 'in memory (SQLite)',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'lmgate-contract-'));
      const store = openStore({ sqlitePath: join(dir, 'lmgate.db') });
      await store.migrate();
      const book = new MemoryCreditBook(store);
      const writer = new UsageWriter(store, book, { onError: () => undefined });
      const admission = new MemoryAdmission(new AccountLimits(new MemoryLimiter(), new MemoryLimiter()), book, writer, new MemorySpend(store, writer));
      await admission.start();
      return {
        admission,
        store,
        async close() {
          await admission.close();
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'shared (PostgreSQL and Redis)',
    async open() {
      const database = await createTestDatabase();
      const redis = testRedis();
      const store = openStore({ databaseUrl: database.url, sqlitePath: '/nonexistent' });
      await store.migrate();
      const config = loadConfig({ env: {}, cwd: tmpdir(), overrides: { store: { database_url: database.url }, redis: { url: TEST_REDIS_URL } } });
      const { admission } = await openSharedMode(config, store, { prefix: redis.prefix, onError: () => undefined });
      await admission.start();
      return {
        admission,
        store,
        async close() {
          await admission.close();
          await store.close();
          await redis.cleanup();
          await database.drop();
        },
      };
    },
  },
];

function tier(overrides: Partial<TierConfig> = {}): Tier {
  const config: TierConfig = { rpm: 1_000, tpm: 100_000, concurrency: 2, models: ['*'], subscription: false, price_month: 0, credits_month: 0, price_multiplier: 1, ...overrides };
  return { name: 'test', config, multiplierPpm: 1_000_000, allowsModel: () => true };
}

describe.each(IMPLEMENTATIONS)('the Admission contract, $name', ({ open }) => {
  let impl: Implementation;
  let accounts = 0;

  beforeAll(async () => {
    impl = await open();
  });
  afterAll(() => impl?.close());

  async function account(micros: number, overrides: Partial<TierConfig> = {}): Promise<Principal> {
    const created = await impl.store.createAccount({ email: `contract${++accounts}@example.test`, tier: 'free' });
    if (micros > 0) await impl.store.appendLedgerEntry({ accountId: created.id, kind: 'grant', amountMicros: micros });
    return { accountId: created.id, tier: tier(overrides) };
  }

  function usage(principal: Principal, costMicros: number, completionTokens = 5): { completionTokens: number; record: UsageRecord } {
    return { completionTokens, record: plainRecord(principal.accountId, costMicros, { keyId: keyIdOf(principal), completionTokens }) };
  }

  /** The request path's steps up to the model: open, credit before counting, the decision; a refusal gives back what it took. */
  async function admitted(principal: Principal, plan: RequestPlan): Promise<Pass> {
    const pass = impl.admission.open(principal);
    try {
      await pass.requireCredit();
      await pass.admit(plan);
    } catch (err) {
      pass.refuse();
      throw err;
    }
    return pass;
  }

  /** Released, and durable by the time this resolves. */
  async function release(pass: Pass, settlement: { completionTokens: number; record: UsageRecord }): Promise<void> {
    await pass.release(settlement).durable;
  }

  it('reserves the worst case, charges the cost at release and frees the rest; the store has it', async () => {
    const principal = await account(1_000);
    const pass = await admitted(principal, { promptTokens: 10, worstCaseMicros: 400 });
    expect(pass.reservedMicros).toBe(400);
    expect(await impl.admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 1_000, reservedMicros: 400 });
    await release(pass, usage(principal, 150));
    expect(await impl.admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 850, reservedMicros: 0 });
    await impl.admission.flush();
    expect(await impl.store.balanceOf(principal.accountId)).toBe(850);
    expect(await impl.admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 850, reservedMicros: 0 });
  });

  it('charges a cost above the hold from what else is available, never another request’s hold, cut only at 0', async () => {
    const principal = await account(1_000);
    const other = await admitted(principal, { promptTokens: 1, worstCaseMicros: 300 });
    await release(await admitted(principal, { promptTokens: 1, worstCaseMicros: 100 }), usage(principal, 500));
    expect(await impl.admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 500, reservedMicros: 300 });
    // 500 left, 300 of it held by the other request: a cost of 400 gets 200.
    await release(await admitted(principal, { promptTokens: 1, worstCaseMicros: 100 }), usage(principal, 400));
    await release(other, usage(principal, 300));
    expect(await impl.admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 0, reservedMicros: 0 });
    await impl.admission.flush();
    const stored = await impl.store.listUsage(principal.accountId);
    expect(stored.map((record) => [record.costMicros, record.shortfallMicros]).sort((a, b) => a[0]! - b[0]!)).toEqual([
      [300, 0],
      [400, 200],
      [500, 0],
    ]);
    expect(await impl.store.balanceOf(principal.accountId)).toBe(0);
    expect(await impl.store.sumLedger(principal.accountId)).toBe(0);
  });

  it('refuses a worst case above what is available with 402 and the amounts, and at zero any request, naming no amount', async () => {
    const principal = await account(1_000);
    const first = await admitted(principal, { promptTokens: 1, worstCaseMicros: 800 });
    await expect(admitted(principal, { promptTokens: 1, worstCaseMicros: 300 })).rejects.toMatchObject({ code: 'insufficient_credits', neededMicros: 300, availableMicros: 200 });
    await release(first, usage(principal, 1_000));
    expect(await impl.admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 0, reservedMicros: 0 });
    const refusal = await admitted(principal, { promptTokens: 1, worstCaseMicros: 0 }).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(InsufficientCreditsError);
    expect(refusal).toMatchObject({ neededMicros: undefined, availableMicros: 0 });
    // A grant lets it in again once the admission hears of it. The charge is in the store
    // first: a balance read while a batch of charges is being written is kept until it lands.
    await impl.admission.flush();
    await impl.store.appendLedgerEntry({ accountId: principal.accountId, kind: 'grant', amountMicros: 500 });
    await impl.admission.balanceChanged(principal.accountId);
    await release(await admitted(principal, { promptTokens: 1, worstCaseMicros: 500 }), usage(principal, 0));
  });

  it('holds a concurrency slot per admitted request until it is released', async () => {
    const principal = await account(1_000_000);
    const a = await admitted(principal, { promptTokens: 1, worstCaseMicros: 1 });
    const b = await admitted(principal, { promptTokens: 1, worstCaseMicros: 1 });
    await expect(admitted(principal, { promptTokens: 1, worstCaseMicros: 1 })).rejects.toBeInstanceOf(RateLimitedError);
    expect((await impl.admission.limits(principal)).concurrency).toEqual({ limit: 2, inUse: 2 });
    await release(a, usage(principal, 1));
    const c = await admitted(principal, { promptTokens: 1, worstCaseMicros: 1 });
    await release(b, usage(principal, 1));
    await release(c, usage(principal, 1));
    expect((await impl.admission.limits(principal)).concurrency).toEqual({ limit: 2, inUse: 0 });
  });

  it('takes the prompt against tokens per minute at admission and the output at release', async () => {
    const principal = await account(1_000_000, { tpm: 1_000 });
    await release(await admitted(principal, { promptTokens: 900, worstCaseMicros: 1 }), usage(principal, 1, 100));
    await expect(admitted(principal, { promptTokens: 50, worstCaseMicros: 1 })).rejects.toBeInstanceOf(RateLimitedError);
  });

  it('holds a key’s requests against its credit limit, and at the limit refuses that key only', async () => {
    const principal = await account(1_000);
    const keyed: Principal = { ...principal, spendLimits: [keySpendLimit(`key_${Math.random().toString(36).slice(2)}`, { amountMicros: 500, period: 'total' })] };
    const first = await admitted(keyed, { promptTokens: 1, worstCaseMicros: 300 });
    await expect(admitted(keyed, { promptTokens: 1, worstCaseMicros: 300 })).rejects.toMatchObject({ reason: 'key_credit_limit', neededMicros: 300, availableMicros: 200 });
    expect(await impl.admission.snapshot(principal.accountId)).toEqual({ balanceMicros: 1_000, reservedMicros: 300 });
    await release(first, usage(keyed, 250));
    expect(await impl.admission.spent(keyed.spendLimits![0]!)).toBe(250);
    await release(await admitted(keyed, { promptTokens: 1, worstCaseMicros: 250 }), usage(keyed, 250));
    await expect(admitted(keyed, { promptTokens: 1, worstCaseMicros: 0 })).rejects.toMatchObject({ reason: 'key_credit_limit', availableMicros: 0, neededMicros: undefined });
    // The account has 500 left for its other keys.
    await release(await admitted(principal, { promptTokens: 1, worstCaseMicros: 500 }), usage(principal, 0));
  });
});

/** The key of a principal's key credit limit, if it has one. */
function keyIdOf(principal: Principal): string | undefined {
  const scope = principal.spendLimits?.[0]?.scope;
  return scope && 'keyId' in scope ? scope.keyId : undefined;
}
