// On SQLite, usage batches are written on a thread of their own: the event loop keeps
// turning while a large batch commits, and the batch is in the file once it resolves.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newTimeOrderedId } from '../../src/ids.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lmgate-usage-thread-'));
  store = openStore({ sqlitePath: join(dir, 'lmgate.db') });
  await store.migrate();
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function records(accountId: string, count: number): UsageRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    id: newTimeOrderedId('usage'),
    requestId: `req_${i}`,
    accountId,
    keyId: 'key_test',
    model: 'demo-echo',
    promptTokens: 10,
    ...PLAIN_USAGE,
    completionTokens: 20,
    costMicros: 3,
    latencyMs: 1,
    status: 200,
    streamed: false,
    finishReason: 'stop',
    memberId: null,
    createdAt: new Date().toISOString(),
  }));
}

it('keeps the event loop turning while a batch of 20,000 records commits', async () => {
  const account = await store.createAccount({ email: 'thread@example.com', tier: 'free' });
  await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000_000, reason: 'test' });
  await store.recordUsage(records(account.id, 1)); // the thread is up

  let turns = 0;
  let writing = true;
  const turn = (): void => {
    turns += 1;
    if (writing) setImmediate(turn);
  };
  setImmediate(turn);
  await store.recordUsage(records(account.id, 20_000));
  writing = false;

  // Written on the event loop, the batch would take its ~100 ms or more in one piece and
  // let no turn run until it returned.
  expect(turns).toBeGreaterThan(20);
  expect(await store.balanceOf(account.id)).toBe(1_000_000 - 3 * 20_001);
  expect(await store.sumLedger(account.id)).toBe(1_000_000 - 3 * 20_001);
  expect(await store.listUsage(account.id, { limit: 30_000 })).toHaveLength(20_001);
});

it.runIf(process.platform === 'linux')('reports the CPU its thread used, which grows with what it writes', async () => {
  const account = await store.createAccount({ email: 'cpu@example.com', tier: 'free' });
  await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000_000, reason: 'test' });
  await store.recordUsage(records(account.id, 1));
  const before = store.usageThreadCpuSeconds()!;
  await store.recordUsage(records(account.id, 20_000));
  const after = store.usageThreadCpuSeconds()!;
  // 20,000 inserts with their ledger entries take well over a clock tick (10 ms) of CPU.
  expect(before).toBeGreaterThanOrEqual(0);
  expect(after - before).toBeGreaterThan(0.01);
});

it('stops its thread on close, and a store opened again writes on a new one', async () => {
  const account = await store.createAccount({ email: 'reopen@example.com', tier: 'free' });
  await store.recordUsage(records(account.id, 10));
  await store.close();
  store = openStore({ sqlitePath: join(dir, 'lmgate.db') });
  await store.recordUsage(records(account.id, 5));
  expect(await store.listUsage(account.id, { limit: 100 })).toHaveLength(15);
});
