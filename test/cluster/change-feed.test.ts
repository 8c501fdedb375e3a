// The change feed on its own, on both databases: what it delivers, in what order, once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../src/cluster/change-feed.js';
import { Commands } from '../../src/commands/commands.js';
import type { ChangeEvent, Store } from '../../src/store/store.js';
import { STORE_BACKENDS, type OpenedStore } from '../helpers/store-backends.js';

describe.each(STORE_BACKENDS)('change feed ($name)', (backend) => {
  let opened: OpenedStore;
  let store: Store;
  let seen: Omit<ChangeEvent, 'id'>[];
  let errors: unknown[];
  let feed: ChangeFeed;

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
    seen = [];
    errors = [];
    // A long interval: the test polls by hand.
    feed = new ChangeFeed(store, ({ kind, subjectId }) => void seen.push({ kind, subjectId }), (err) => errors.push(err), 60_000);
  });
  afterEach(async () => {
    await feed.stop();
    await store.close();
    await opened.cleanup();
  });

  it('starts after what is already recorded, then delivers each later change once, in order', async () => {
    const commands = new Commands(store);
    const { account } = await commands.accounts.create({ email: 'feed@example.test', name: null, tier: 'free', creditsMicros: 5, creditsReason: 'r' });
    await feed.start();
    await feed.poll();
    expect(seen).toEqual([]); // the grant before start is history

    const { record } = await commands.keys.create(account.id, 'k');
    await commands.keys.revoke(record.id);
    await commands.accounts.setTier(account.id, 'pro');
    await commands.credits.grant({ accountId: account.id, amountMicros: 10, reason: 'r' });
    await feed.poll();
    expect(seen).toEqual([
      { kind: 'key', subjectId: record.id },
      { kind: 'account', subjectId: account.id },
      { kind: 'balance', subjectId: account.id },
    ]);
    await feed.poll();
    expect(seen).toHaveLength(3);
    expect(errors).toEqual([]);
  });

  it('sees changes made through another connection (another instance, the CLI)', async () => {
    await feed.start();
    const other = opened.openAnother();
    try {
      const { account } = await new Commands(other).accounts.create({ email: 'other@example.test', name: null, tier: 'free', creditsMicros: 0, creditsReason: 'r' });
      await new Commands(other).accounts.setStatus(account.id, 'suspended');
      await feed.poll();
      expect(seen).toEqual([{ kind: 'account', subjectId: account.id }]);
    } finally {
      await other.close();
    }
  });

  it('reports a failed poll and delivers what it missed on the next one', async () => {
    let down = false;
    const flaky = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'changesAfter' && down) return () => Promise.reject(new Error('store down'));
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const flakyFeed = new ChangeFeed(flaky, ({ kind, subjectId }) => void seen.push({ kind, subjectId }), (err) => errors.push(err), 60_000);
    await flakyFeed.start();
    const { account } = await new Commands(store).accounts.create({ email: 'late@example.test', name: null, tier: 'free', creditsMicros: 0, creditsReason: 'r' });
    await new Commands(store).accounts.setTier(account.id, 'pro');
    down = true;
    await flakyFeed.poll();
    expect(errors).toHaveLength(1);
    expect(seen).toEqual([]);
    down = false;
    await flakyFeed.poll();
    expect(seen).toEqual([{ kind: 'account', subjectId: account.id }]);
    await flakyFeed.stop();
  });
});
