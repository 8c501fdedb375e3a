// Credits in the store: the ledger, the cached balance, and usage records with their
// charges. Run once against SQLite (a temporary file) and once against the real PostgreSQL
// server. The invariant of DESIGN "Money is a ledger" (the balance equals the sum of its
// entries, and never goes below zero) is checked after every operation.
import { Migrator, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { KyselyStore } from '../../src/store/kysely-store.js';
import { MIGRATION_NAMES, migrationProvider } from '../../src/store/migrations/index.js';
import {
  BalanceWouldGoNegativeError,
  NotFoundInStoreError,
  type LedgerEntry,
  type NewLedgerEntry,
  type Store,
  type UsageRecord,
} from '../../src/store/store.js';
import { STORE_BACKENDS as backends, type OpenedStore } from '../helpers/store-backends.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';

const UNKNOWN_ACCOUNT = 'acct_00000000000000000000';

describe.each(backends)('credits in the store on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;
  const extraHandles: Store[] = [];

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
  });

  afterEach(async () => {
    for (const handle of extraHandles.splice(0)) await handle.close();
    await store.close();
    await opened.cleanup();
  });

  let accountCounter = 0;
  async function newAccount(): Promise<string> {
    accountCounter += 1;
    return (await store.createAccount({ email: `ledger${accountCounter}@example.com`, tier: 'free' })).id;
  }

  /** The invariant: the cached balance equals the ledger's sum, and is never negative. */
  async function expectConsistent(accountId: string, handle: Store = store): Promise<number> {
    const balance = await handle.balanceOf(accountId);
    expect(balance).toBe(await handle.sumLedger(accountId));
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(Number.isSafeInteger(balance)).toBe(true);
    return balance;
  }

  async function append(entry: NewLedgerEntry, handle: Store = store): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    const result = await handle.appendLedgerEntry(entry);
    expect(await expectConsistent(entry.accountId, handle)).toBe(result.balanceMicros);
    return result;
  }

  let usageCounter = 0;
  function usage(accountId: string, costMicros: number, overrides: Partial<UsageRecord> = {}): UsageRecord {
    usageCounter += 1;
    return {
      id: newId('usage'),
      requestId: `req_test${usageCounter}`,
      accountId,
      keyId: 'key_00000000000000000001',
      model: 'demo-lorem',
      promptTokens: 10,
      ...PLAIN_USAGE,
      completionTokens: 20,
      costMicros,
      latencyMs: 42,
      status: 200,
      streamed: false,
      finishReason: 'stop',
      memberId: null,
      createdAt: new Date(Date.UTC(2030, 0, 1, 0, 0, 0, usageCounter)).toISOString(),
      ...overrides,
    };
  }

  it('gives accounts that existed before migration 0002 a zero balance', async () => {
    const fresh = await backend.open();
    try {
      if (!(fresh.store instanceof KyselyStore)) throw new Error('expected the Kysely store');
      const db = fresh.store.db;
      await new Migrator({ db, provider: migrationProvider }).migrateTo('0001_initial');
      await sql`insert into accounts (id, email, name, status, tier, subscription_status, created_at, updated_at)
                values ('acct_before0002xxxxxxxxx', 'old@example.com', null, 'active', 'free', 'inactive', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`.execute(db);
      expect(await fresh.store.migrate()).toEqual(MIGRATION_NAMES.slice(1));
      expect(await fresh.store.balanceOf('acct_before0002xxxxxxxxx')).toBe(0);
      expect(await fresh.store.sumLedger('acct_before0002xxxxxxxxx')).toBe(0);
      const { balanceMicros } = await fresh.store.appendLedgerEntry({ accountId: 'acct_before0002xxxxxxxxx', kind: 'grant', amountMicros: 7 });
      expect(balanceMicros).toBe(7);
    } finally {
      await fresh.store.close();
      await fresh.cleanup();
    }
  });

  it('raises the balance version with every write of the balance, and with nothing else', async () => {
    const accountId = await newAccount();
    expect(await store.versionedBalanceOf(accountId)).toEqual({ balanceMicros: 0, version: 0 });
    await store.appendLedgerEntry({ accountId, kind: 'grant', amountMicros: 1_000, reason: 'test' });
    expect(await store.versionedBalanceOf(accountId)).toEqual({ balanceMicros: 1_000, version: 1 });
    await store.recordUsage([usage(accountId, 300)]);
    expect(await store.versionedBalanceOf(accountId)).toEqual({ balanceMicros: 700, version: 2 });
    await store.recordUsage([usage(accountId, 0)]);
    await store.setAccountTier(accountId, 'pro');
    expect(await store.versionedBalanceOf(accountId)).toEqual({ balanceMicros: 700, version: 2 });
  });

  it('starts an account at zero with an empty ledger', async () => {
    const accountId = await newAccount();
    expect(await store.balanceOf(accountId)).toBe(0);
    expect(await store.sumLedger(accountId)).toBe(0);
    expect(await store.listLedger(accountId)).toEqual([]);
    expect(await store.listUsage(accountId)).toEqual([]);
  });

  it('moves the balance by exactly each grant and adjustment, and returns the stored entry', async () => {
    const accountId = await newAccount();

    const grant = await append({ accountId, kind: 'grant', amountMicros: 5_000_000, reason: 'welcome', reference: 'ticket-1' });
    expect(grant.balanceMicros).toBe(5_000_000);
    expect(grant.entry).toMatchObject({ accountId, kind: 'grant', amountMicros: 5_000_000, reason: 'welcome', reference: 'ticket-1' });
    expect(Number.isSafeInteger(grant.entry.id)).toBe(true);
    expect(new Date(grant.entry.createdAt).toISOString()).toBe(grant.entry.createdAt);

    const taken = await append({ accountId, kind: 'adjustment', amountMicros: -1_234_567 });
    expect(taken.balanceMicros).toBe(3_765_433);
    expect(taken.entry).toMatchObject({ kind: 'adjustment', amountMicros: -1_234_567, reason: null, reference: null });
    expect(taken.entry.id).toBeGreaterThan(grant.entry.id);

    const topUp = await append({ accountId, kind: 'top_up', amountMicros: 1 });
    expect(topUp.balanceMicros).toBe(3_765_434);
    // Taking exactly everything is allowed: zero is not below zero.
    const all = await append({ accountId, kind: 'adjustment', amountMicros: -3_765_434 });
    expect(all.balanceMicros).toBe(0);

    expect(await store.listLedger(accountId)).toEqual([all.entry, topUp.entry, taken.entry, grant.entry]);
  });

  it('keeps each account’s balance to its own entries', async () => {
    const alice = await newAccount();
    const bob = await newAccount();
    await append({ accountId: alice, kind: 'grant', amountMicros: 700 });
    await append({ accountId: bob, kind: 'grant', amountMicros: 30 });
    expect(await expectConsistent(alice)).toBe(700);
    expect(await expectConsistent(bob)).toBe(30);
    expect((await store.listLedger(bob)).map((e) => e.amountMicros)).toEqual([30]);
  });

  it('refuses an entry that would take the balance below zero and changes nothing', async () => {
    const accountId = await newAccount();
    const grant = await append({ accountId, kind: 'grant', amountMicros: 1_000 });
    const changesBefore = await store.latestChangeId();

    const refused = store.appendLedgerEntry({ accountId, kind: 'adjustment', amountMicros: -1_001, reason: 'too much' });
    await expect(refused).rejects.toBeInstanceOf(BalanceWouldGoNegativeError);
    await expect(refused).rejects.toMatchObject({ balanceMicros: 1_000, amountMicros: -1_001 });

    expect(await expectConsistent(accountId)).toBe(1_000);
    expect(await store.listLedger(accountId)).toEqual([grant.entry]);
    expect(await store.latestChangeId()).toBe(changesBefore);
  });

  it('refuses entries for an unknown account, or with an amount that is not integer micros, and writes nothing', async () => {
    const accountId = await newAccount();
    await expect(store.appendLedgerEntry({ accountId: UNKNOWN_ACCOUNT, kind: 'grant', amountMicros: 5 })).rejects.toBeInstanceOf(
      NotFoundInStoreError,
    );
    for (const amountMicros of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      await expect(store.appendLedgerEntry({ accountId, kind: 'grant', amountMicros }), String(amountMicros)).rejects.toBeInstanceOf(RangeError);
    }
    await expect(store.appendLedgerEntry({ accountId, kind: 'bonus' as 'grant', amountMicros: 5 })).rejects.toBeInstanceOf(RangeError);
    expect(await expectConsistent(accountId)).toBe(0);
    expect(await store.listLedger(accountId)).toEqual([]);
    expect(await store.sumLedger(UNKNOWN_ACCOUNT)).toBe(0);
    await expect(store.balanceOf(UNKNOWN_ACCOUNT)).rejects.toBeInstanceOf(NotFoundInStoreError);
  });

  it('records a balance change event for every ledger entry, and none for usage', async () => {
    const accountId = await newAccount();
    const other = await newAccount();
    const before = await store.latestChangeId();
    await store.appendLedgerEntry({ accountId, kind: 'grant', amountMicros: 10_000 });
    await store.appendLedgerEntry({ accountId: other, kind: 'grant', amountMicros: 10_000 });
    await store.appendLedgerEntry({ accountId, kind: 'adjustment', amountMicros: -1 });

    const events = await store.changesAfter(before);
    expect(events.map((e) => ({ kind: e.kind, subjectId: e.subjectId }))).toEqual([
      { kind: 'balance', subjectId: accountId },
      { kind: 'balance', subjectId: other },
      { kind: 'balance', subjectId: accountId },
    ]);

    const latest = await store.latestChangeId();
    await store.recordUsage([usage(accountId, 100)]);
    expect(await store.changesAfter(latest)).toEqual([]);
  });

  it('charges a batch of 500 usage records across accounts exactly the sum of their costs', async () => {
    const accounts = [await newAccount(), await newAccount(), await newAccount(), await newAccount()];
    const granted = 10_000_000;
    for (const accountId of accounts) await append({ accountId, kind: 'grant', amountMicros: granted });

    // Costs that vary and include zero (a request that failed before generating anything).
    const records = Array.from({ length: 500 }, (_, i) => usage(accounts[i % accounts.length]!, i % 25 === 0 ? 0 : ((i * 7919) % 10_000) + 1));
    await store.recordUsage(records);

    for (const accountId of accounts) {
      const own = records.filter((r) => r.accountId === accountId);
      const cost = own.reduce((sum, r) => sum + r.costMicros, 0);
      expect(cost).toBeLessThan(granted);
      expect(await expectConsistent(accountId)).toBe(granted - cost);

      // One usage entry per record with a cost, pointing at it and taking exactly its cost.
      const usageEntries = (await store.listLedger(accountId)).filter((e) => e.kind === 'usage');
      const withCost = own.filter((r) => r.costMicros > 0);
      expect(usageEntries).toHaveLength(withCost.length);
      expect(usageEntries.length).toBeLessThan(own.length);
      const entryByReference = new Map(usageEntries.map((e) => [e.reference, e]));
      for (const record of withCost) expect(entryByReference.get(record.id)?.amountMicros).toBe(-record.costMicros);

      expect(await store.listUsage(accountId)).toHaveLength(own.length);
    }
  });

  it('charges nothing twice when a batch is retried, in part or whole, or repeats a record', async () => {
    const accountId = await newAccount();
    await append({ accountId, kind: 'grant', amountMicros: 1_000_000 });
    const first = Array.from({ length: 30 }, () => usage(accountId, 1_000));
    await store.recordUsage(first);
    expect(await expectConsistent(accountId)).toBe(970_000);

    await store.recordUsage(first);
    expect(await expectConsistent(accountId)).toBe(970_000);

    // Half already stored, half new, and one new record twice in the same batch.
    const fresh = Array.from({ length: 10 }, () => usage(accountId, 500));
    await store.recordUsage([...first.slice(15), ...fresh, fresh[0]!]);
    expect(await expectConsistent(accountId)).toBe(965_000);

    expect(await store.listUsage(accountId)).toHaveLength(40);
    expect((await store.listLedger(accountId)).filter((e) => e.kind === 'usage')).toHaveLength(40);
  });

  it('caps a charge at the balance left, at zero, while the usage record keeps its full cost', async () => {
    const accountId = await newAccount();
    await append({ accountId, kind: 'grant', amountMicros: 1_000 });
    const over = usage(accountId, 5_000);
    const afterEmpty = usage(accountId, 300);
    await store.recordUsage([over, afterEmpty]);

    expect(await expectConsistent(accountId)).toBe(0);
    const entries = await store.listLedger(accountId);
    expect(entries.map((e) => [e.kind, e.reference, e.amountMicros])).toEqual([
      ['usage', afterEmpty.id, 0],
      ['usage', over.id, -1_000],
      ['grant', null, 1_000],
    ]);
    expect(entries[1]!.reason).toContain('capped');
    const stored = new Map((await store.listUsage(accountId)).map((r) => [r.id, r]));
    expect(stored.get(over.id)?.costMicros).toBe(5_000);
    expect(stored.get(afterEmpty.id)?.costMicros).toBe(300);
  });

  it('writes nothing of a batch that names an unknown account, and nothing for an empty one', async () => {
    const accountId = await newAccount();
    await append({ accountId, kind: 'grant', amountMicros: 1_000 });
    await expect(store.recordUsage([usage(accountId, 10), usage(UNKNOWN_ACCOUNT, 10)])).rejects.toBeInstanceOf(NotFoundInStoreError);
    await store.recordUsage([]);
    expect(await expectConsistent(accountId)).toBe(1_000);
    expect(await store.listUsage(accountId)).toEqual([]);
  });

  it('refuses a usage record with a negative or fractional cost', async () => {
    const accountId = await newAccount();
    await append({ accountId, kind: 'grant', amountMicros: 1_000 });
    await expect(store.recordUsage([usage(accountId, -5)])).rejects.toBeInstanceOf(RangeError);
    await expect(store.recordUsage([usage(accountId, 0.5)])).rejects.toBeInstanceOf(RangeError);
    expect(await expectConsistent(accountId)).toBe(1_000);
    expect(await store.listUsage(accountId)).toEqual([]);
  });

  it('stores every field of a usage record as given', async () => {
    const accountId = await newAccount();
    const streamed = usage(accountId, 0, { streamed: true, finishReason: null, status: 499, model: 'llama-3.1-8b', latencyMs: 12_345 });
    const plain = usage(accountId, 0, { promptTokens: 100_000, completionTokens: 0, finishReason: 'length' });
    await store.recordUsage([streamed, plain]);
    const stored = new Map((await store.listUsage(accountId)).map((r) => [r.id, r]));
    expect(stored.get(streamed.id)).toEqual(streamed);
    expect(stored.get(plain.id)).toEqual(plain);
  });

  it('lists the ledger newest first, with a limit', async () => {
    const accountId = await newAccount();
    const amounts = [100, 200, -50, 300, -25];
    for (const amountMicros of amounts) await append({ accountId, kind: amountMicros > 0 ? 'grant' : 'adjustment', amountMicros });
    const entries = await store.listLedger(accountId);
    expect(entries.map((e) => e.amountMicros)).toEqual([...amounts].reverse());
    expect((await store.listLedger(accountId, { limit: 2 })).map((e) => e.amountMicros)).toEqual([-25, 300]);
    expect(await store.listLedger(accountId, { limit: 0 })).toEqual([]);
    await expect(store.listLedger(accountId, { limit: -1 })).rejects.toBeInstanceOf(RangeError);
  });

  it('lists usage newest first by when it happened, with a limit and a start time', async () => {
    const accountId = await newAccount();
    const other = await newAccount();
    const at = (second: number): string => new Date(Date.UTC(2030, 5, 1, 12, 0, second)).toISOString();
    // Written out of order: the list follows createdAt, not the order of arrival.
    const records = [usage(accountId, 0, { createdAt: at(3) }), usage(accountId, 0, { createdAt: at(1) }), usage(accountId, 0, { createdAt: at(2) })];
    await store.recordUsage([records[0]!, usage(other, 0, { createdAt: at(5) })]);
    await store.recordUsage([records[1]!, records[2]!]);

    expect((await store.listUsage(accountId)).map((r) => r.createdAt)).toEqual([at(3), at(2), at(1)]);
    expect((await store.listUsage(accountId, { limit: 2 })).map((r) => r.createdAt)).toEqual([at(3), at(2)]);
    // sinceIso is inclusive.
    expect((await store.listUsage(accountId, { sinceIso: at(2) })).map((r) => r.createdAt)).toEqual([at(3), at(2)]);
    expect((await store.listUsage(accountId, { sinceIso: at(2), limit: 1 })).map((r) => r.createdAt)).toEqual([at(3)]);
    expect(await store.listUsage(accountId, { sinceIso: at(4) })).toEqual([]);
    expect((await store.listUsage(other)).map((r) => r.createdAt)).toEqual([at(5)]);
  });

  // SQLite runs these on one handle: its writers are serialised in-process by Kysely, and
  // two handles in one process would block each other synchronously (better-sqlite3's busy
  // wait stops the event loop). PostgreSQL uses two pools, as two instances would.
  function handles(): Store[] {
    if (backend.name === 'sqlite') return [store];
    const other = opened.openAnother();
    extraHandles.push(other);
    return [store, other];
  }

  it('never goes below zero when adjustments and charges race for more than the balance', async () => {
    const accountId = await newAccount();
    await append({ accountId, kind: 'grant', amountMicros: 100_000 });
    const pool = handles();
    const adjustments: Array<boolean> = [];
    const records: UsageRecord[] = [];

    // 25 adjustments of 5,000 and 25 charges of 3,000: twice what the balance holds.
    await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const handle = pool[i % pool.length]!;
        if (i % 2 === 0) {
          try {
            await handle.appendLedgerEntry({ accountId, kind: 'adjustment', amountMicros: -5_000 });
            adjustments.push(true);
          } catch (err) {
            expect(err).toBeInstanceOf(BalanceWouldGoNegativeError);
            adjustments.push(false);
          }
        } else {
          const record = usage(accountId, 3_000);
          records.push(record);
          await handle.recordUsage([record]);
        }
      }),
    );

    const balance = await expectConsistent(accountId);
    for (const handle of pool) expect(await expectConsistent(accountId, handle)).toBe(balance);
    const entries = await store.listLedger(accountId);
    const charged = -entries.filter((e) => e.kind === 'usage').reduce((sum, e) => sum + e.amountMicros, 0);
    const adjusted = adjustments.filter(Boolean).length * 5_000;
    expect(balance).toBe(100_000 - adjusted - charged);
    // Demand exceeded supply, so something was refused or capped, and what is left is less
    // than one refused adjustment.
    expect(adjustments.some((ok) => !ok) || charged < 75_000).toBe(true);
    if (adjustments.some((ok) => !ok)) expect(balance).toBeLessThan(5_000);
    // Every charge has exactly one entry, never more than its cost.
    expect(entries.filter((e) => e.kind === 'usage').map((e) => e.reference).sort()).toEqual(records.map((r) => r.id).sort());
    expect(entries.filter((e) => e.kind === 'usage').every((e) => e.amountMicros <= 0 && e.amountMicros >= -3_000)).toBe(true);
    expect(entries.filter((e) => e.kind === 'adjustment')).toHaveLength(adjusted / 5_000);
  });

  it('adds up exactly when concurrent grants, adjustments and multi-account batches all fit', async () => {
    const alice = await newAccount();
    const bob = await newAccount();
    await append({ accountId: alice, kind: 'grant', amountMicros: 50_000 });
    await append({ accountId: bob, kind: 'grant', amountMicros: 50_000 });
    const pool = handles();

    // Batches name the two accounts in opposite orders: on PostgreSQL the row locks are
    // taken in id order whatever the batch order, so these cannot deadlock.
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const handle = pool[i % pool.length]!;
        switch (i % 4) {
          case 0:
            return handle.appendLedgerEntry({ accountId: alice, kind: 'grant', amountMicros: 1_000 });
          case 1:
            return handle.recordUsage([usage(alice, 700), usage(bob, 300)]);
          case 2:
            return handle.recordUsage([usage(bob, 700), usage(alice, 300)]);
          default:
            return handle.appendLedgerEntry({ accountId: bob, kind: 'adjustment', amountMicros: -100 });
        }
      }),
    );

    // 15 of each kind: alice +15,000 −15 × 1,000; bob −15 × 1,000 −15 × 100.
    expect(await expectConsistent(alice)).toBe(50_000);
    expect(await expectConsistent(bob)).toBe(50_000 - 15_000 - 1_500);
    expect(await store.listUsage(alice)).toHaveLength(30);
  });
});
