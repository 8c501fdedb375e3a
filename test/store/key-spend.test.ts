// A key's credit limit in the store, on SQLite and PostgreSQL: kept with the key, changed
// and cleared by an update, and the key's spending in a window summed in one read, counting
// each record once whether the store has it yet or it is only listed as unstored.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { newTimeOrderedId } from '../../src/ids.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { STORE_BACKENDS as backends, type OpenedStore } from '../helpers/store-backends.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';

describe.each(backends)('keys’ credit limits in the store on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;
  let accountId: string;

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
    accountId = (await store.createAccount({ email: 'spender@example.com', tier: 'free' })).id;
    await store.appendLedgerEntry({ accountId, kind: 'grant', amountMicros: 1_000_000_000 });
  });

  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  async function newKeyId(): Promise<string> {
    const key = generateApiKey();
    return (await store.createApiKey({ accountId, name: 'k', keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour })).id;
  }

  function usage(keyId: string, costMicros: number, createdAt: string): UsageRecord {
    return {
      id: newTimeOrderedId('usage'),
      requestId: 'req_spend',
      accountId,
      keyId,
      model: 'm',
      promptTokens: 1,
      ...PLAIN_USAGE,
      completionTokens: 1,
      costMicros,
      latencyMs: 1,
      status: 200,
      streamed: false,
      finishReason: 'stop',
      memberId: null,
      createdAt,
    };
  }

  it('keeps a key’s credit limit, changes it and clears it', async () => {
    const key = generateApiKey();
    const created = await store.createApiKey({
      accountId,
      name: 'limited',
      keyHash: key.hash,
      prefix: key.prefix,
      lastFour: key.lastFour,
      controls: { expiresAt: null, allowedModels: null, allowedIps: null, rpm: null, creditLimit: { amountMicros: 9_007_199_254_740_000, period: 'month' } },
    });
    expect(created.controls.creditLimit).toEqual({ amountMicros: 9_007_199_254_740_000, period: 'month' });
    expect((await store.findKeyByHash(key.hash))!.controls.creditLimit).toEqual({ amountMicros: 9_007_199_254_740_000, period: 'month' });

    const renamed = await store.updateKey(created.id, accountId, { name: 'renamed' });
    expect(renamed!.controls.creditLimit).toEqual({ amountMicros: 9_007_199_254_740_000, period: 'month' });
    const total = await store.updateKey(created.id, accountId, { controls: { creditLimit: { amountMicros: 5_000_000, period: 'total' } } });
    expect(total!.controls.creditLimit).toEqual({ amountMicros: 5_000_000, period: 'total' });
    const cleared = await store.updateKey(created.id, accountId, { controls: { creditLimit: null } });
    expect(cleared!.controls.creditLimit).toBeNull();
    expect((await store.findKeyById(created.id))!.controls.creditLimit).toBeNull();
  });

  it('sums a key’s spending from a time on, or all of it, and no other key’s', async () => {
    const keyId = await newKeyId();
    const other = await newKeyId();
    await store.recordUsage([
      usage(keyId, 100, '2030-04-30T23:59:59.999Z'),
      usage(keyId, 20, '2030-05-01T00:00:00.000Z'),
      usage(keyId, 3, '2030-05-31T12:00:00.000Z'),
      usage(other, 4_000, '2030-05-02T00:00:00.000Z'),
    ]);
    expect(await store.spendOf({ keyId: keyId }, '2030-05-01T00:00:00.000Z')).toBe(23);
    expect(await store.spendOf({ keyId: keyId }, null)).toBe(123);
    expect(await store.spendOf({ keyId: await newKeyId() }, null)).toBe(0);
  });

  it('counts each listed unstored record once: added when the store lacks it, not again when it has it', async () => {
    const keyId = await newKeyId();
    const stored = usage(keyId, 1_000, '2030-05-02T00:00:00.000Z');
    const storedMeanwhile = usage(keyId, 200, '2030-05-03T00:00:00.000Z');
    const notYet = usage(keyId, 30, '2030-05-04T00:00:00.000Z');
    await store.recordUsage([stored, storedMeanwhile]);
    // Listed twice (a retried settlement appends its record again): still once.
    expect(await store.spendOf({ keyId: keyId }, '2030-05-01T00:00:00.000Z', [storedMeanwhile, notYet, notYet])).toBe(1_230);
    expect(await store.spendOf({ keyId: keyId }, '2030-05-01T00:00:00.000Z', [])).toBe(1_200);
  });
});
