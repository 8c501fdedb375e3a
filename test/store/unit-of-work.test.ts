// A unit of work: the store's writes in one transaction, and the changes they recorded in
// the change feed given back, each once, for the caches to follow after the commit. On
// SQLite and PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { STORE_BACKENDS, type OpenedStore } from '../helpers/store-backends.js';

describe.each(STORE_BACKENDS)('a unit of work on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  it('gives back the changes its writes recorded, each once, and what it returned', async () => {
    const account = await store.createAccount({ email: 'unit@example.test', tier: 'free' });
    const other = await store.createAccount({ email: 'other@example.test', tier: 'free' });
    const { result, changes } = await store.unitOfWork(async (tx) => {
      await tx.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 500, reason: 'one' });
      await tx.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 700, reason: 'two' });
      await tx.setAccountStatus(other.id, 'suspended');
      return 'done';
    });
    expect(result).toBe('done');
    expect(changes).toEqual([
      { kind: 'balance', subjectId: account.id },
      { kind: 'account', subjectId: other.id },
    ]);
    expect(await store.balanceOf(account.id)).toBe(1_200);
    // The feed has every change row, as before.
    const feed = await store.changesAfter(0);
    expect(feed.filter((change) => change.subjectId === account.id)).toHaveLength(2);
    // The next unit of work has only its own; a write outside any has none to give.
    await store.appendLedgerEntry({ accountId: other.id, kind: 'grant', amountMicros: 1, reason: 'outside' });
    const next = await store.unitOfWork((tx) => tx.setAccountStatus(account.id, 'suspended'));
    expect(next.changes).toEqual([{ kind: 'account', subjectId: account.id }]);
  });

  it('gives back nothing for reads, and nothing of a unit of work that threw (rolled back)', async () => {
    const account = await store.createAccount({ email: 'reads@example.test', tier: 'free' });
    expect((await store.unitOfWork((tx) => tx.balanceOf(account.id))).changes).toEqual([]);
    await expect(
      store.unitOfWork(async (tx) => {
        await tx.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 500, reason: 'gone' });
        throw new Error('changed its mind');
      }),
    ).rejects.toThrow('changed its mind');
    expect(await store.balanceOf(account.id)).toBe(0);
  });
});
