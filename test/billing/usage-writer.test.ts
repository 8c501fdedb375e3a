import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryCreditBook } from '../../src/billing/reservations.js';
import { UsageWriter } from '../../src/billing/usage-writer.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { CappedCharge, Store, UsageRecord } from '../../src/store/store.js';
import { Metrics } from '../../src/observability/metrics.js';
import { plainRecord } from '../helpers/usage-record.js';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lmgate-writer-'));
  store = openStore({ sqlitePath: join(dir, 'lmgate.db') });
  await store.migrate();
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function record(accountId: string, costMicros: number): UsageRecord {
  return plainRecord(accountId, costMicros, { completionTokens: 5 });
}

describe('usage writer', () => {
  it('settled charges reach the store and the book agrees with it afterwards', async () => {
    const account = await store.createAccount({ email: 'w@example.test', tier: 'free' });
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000, reason: 'test' });
    const book = new MemoryCreditBook(store);
    const writer = new UsageWriter(store, book, { onError: (err) => { throw err; } });
    await book.load(account.id);
    const reservation = book.reserve(account.id, 300);
    book.settle(reservation, 120);
    writer.enqueue(record(account.id, 120));
    expect(await book.snapshot(account.id)).toEqual({ balanceMicros: 880, reservedMicros: 0 });
    expect(await store.balanceOf(account.id)).toBe(1_000);

    await writer.flush();
    expect(await store.balanceOf(account.id)).toBe(880);
    expect(await store.sumLedger(account.id)).toBe(880);
    expect(await book.snapshot(account.id)).toEqual({ balanceMicros: 880, reservedMicros: 0 });
    expect(writer.pending).toBe(0);
  });

  it('drops the records of an account that no longer exists instead of blocking the queue', async () => {
    const account = await store.createAccount({ email: 'x@example.test', tier: 'free' });
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000, reason: 'test' });
    const errors: unknown[] = [];
    const writer = new UsageWriter(store, new MemoryCreditBook(store), { onError: (err) => errors.push(err) });
    writer.enqueue(record('acct_gone0000000000000000', 10));
    writer.enqueue(record(account.id, 10));

    await expect(writer.flush()).rejects.toThrow(/acct_gone/);
    await writer.flush();
    expect(writer.pending).toBe(0);
    expect(await store.listUsage(account.id)).toHaveLength(1);
    expect(await store.balanceOf(account.id)).toBe(990);
  });
});

describe('a charge the balance cannot cover', () => {
  it('is cut to the balance left, and reported to the observer and at /metrics', async () => {
    const account = await store.createAccount({ email: 'capped@example.test', tier: 'free' });
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 100, reason: 'test' });
    const metrics = new Metrics();
    const capped: CappedCharge[] = [];
    const book = new MemoryCreditBook(store);
    const writer = new UsageWriter(store, book, {
      onError: (err) => { throw err; },
      observer: { batchWritten: (records, seconds) => metrics.batchWritten(records, seconds), chargeCapped: (charge) => (capped.push(charge), metrics.chargeCapped(charge)) },
    });
    // The balance was spent elsewhere after this request reserved: 300 against 100 left.
    const usage = record(account.id, 300);
    writer.enqueue(usage);
    await writer.flush();
    expect(capped).toEqual([{ accountId: account.id, usageId: usage.id, costMicros: 300, chargedMicros: 100 }]);
    expect(await store.balanceOf(account.id)).toBe(0);
    expect(await store.sumLedger(account.id)).toBe(0);
    const exposition = await metrics.registry.metrics();
    expect(exposition).toMatch(/^lmgate_charges_capped_total 1$/m);
    expect(exposition).toMatch(/^lmgate_charges_capped_micros_total 200$/m);
  });
});
