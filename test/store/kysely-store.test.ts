// The Store interface, run once against SQLite (a temporary file) and once against the real
// PostgreSQL server: one implementation serves both, so both must behave the same.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { EmailTakenError, NotFoundInStoreError, type ApiKeyRecord, type Store } from '../../src/store/store.js';
import { STORE_BACKENDS as backends, type OpenedStore } from '../helpers/store-backends.js';


/** Runs `fn` with the clock reading `iso` (only Date is faked; I/O timers stay real). */
async function at<T>(iso: string, fn: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(iso));
  try {
    return await fn();
  } finally {
    vi.useRealTimers();
  }
}

describe.each(backends)('the store on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;
  const extraHandles: Store[] = [];

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
  });

  afterEach(async () => {
    vi.useRealTimers();
    for (const handle of extraHandles.splice(0)) await handle.close();
    await store.close();
    await opened.cleanup();
  });

  async function newKey(accountId: string, name = 'default'): Promise<{ record: ApiKeyRecord; hash: string }> {
    const key = generateApiKey();
    const record = await store.createApiKey({ accountId, name, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour });
    return { record, hash: key.hash };
  }

  it('reports its dialect', () => {
    expect(store.dialect).toBe(backend.name);
  });

  it('applies nothing when migrate runs a second time, from this or another handle', async () => {
    // beforeEach ran the first migration; a fresh database shows what it applied.
    const fresh = await backend.open();
    try {
      expect(await fresh.store.migrate()).toEqual(['0001_initial', '0002_ledger_and_usage', '0003_dashboard', '0004_balance_version', '0005_payments', '0006_code_hint', '0007_account_tokens']);
      expect(await fresh.store.migrate()).toEqual([]);
      const other = fresh.openAnother();
      try {
        expect(await other.migrate()).toEqual([]);
      } finally {
        await other.close();
      }
      // The schema is usable after the no-op runs.
      const account = await fresh.store.createAccount({ email: 'after@migrate.test', tier: 'free' });
      expect(await fresh.store.findAccount(account.id)).toEqual(account);
    } finally {
      await fresh.store.close();
      await fresh.cleanup();
    }
  });

  it('creates an account and finds it by id and by email in any case', async () => {
    const created = await store.createAccount({ email: '  Ada.Lovelace@Example.COM ', name: 'Ada', tier: 'pro' });
    expect(created).toMatchObject({
      email: 'ada.lovelace@example.com',
      name: 'Ada',
      status: 'active',
      tier: 'pro',
      subscriptionStatus: 'inactive',
      subscriptionPeriodEnd: null,
    });
    expect(created.id).toMatch(/^acct_[0-9A-Za-z]{20}$/);
    expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);

    expect(await store.findAccount(created.id)).toEqual(created);
    expect(await store.findAccount('ada.lovelace@example.com')).toEqual(created);
    expect(await store.findAccount('ADA.LOVELACE@EXAMPLE.COM')).toEqual(created);
    expect(await store.findAccount(' Ada.Lovelace@example.com ')).toEqual(created);
  });

  it('finds no account for an unknown id or email', async () => {
    await store.createAccount({ email: 'someone@example.com', tier: 'free' });
    expect(await store.findAccount('acct_00000000000000000000')).toBeUndefined();
    expect(await store.findAccount('nobody@example.com')).toBeUndefined();
  });

  it('stores a missing name as null', async () => {
    const created = await store.createAccount({ email: 'noname@example.com', tier: 'free' });
    expect(created.name).toBeNull();
    expect((await store.findAccount(created.id))?.name).toBeNull();
  });

  it('rejects a second account with the same email, whatever its case', async () => {
    const first = await store.createAccount({ email: 'dup@example.com', tier: 'free' });
    await expect(store.createAccount({ email: 'dup@example.com', tier: 'free' })).rejects.toThrow();
    await expect(store.createAccount({ email: 'DUP@Example.com', tier: 'pro' })).rejects.toThrow();
    expect(await store.listAccounts()).toEqual([first]);
  });

  it('lists accounts by creation time, not by insertion order or id', async () => {
    const later = await at('2030-01-01T00:00:02.000Z', () => store.createAccount({ email: 'later@example.com', tier: 'free' }));
    const earliest = await at('2030-01-01T00:00:00.000Z', () => store.createAccount({ email: 'earliest@example.com', tier: 'free' }));
    const middle = await at('2030-01-01T00:00:01.000Z', () => store.createAccount({ email: 'middle@example.com', tier: 'free' }));

    expect((await store.listAccounts()).map((a) => a.email)).toEqual([earliest.email, middle.email, later.email]);
  });

  it('changes an account status and tier and records a change event for each', async () => {
    const account = await store.createAccount({ email: 'changes@example.com', tier: 'free' });
    const before = await store.latestChangeId();
    expect(await store.changesAfter(before)).toEqual([]);

    const suspended = await store.setAccountStatus(account.id, 'suspended');
    expect(suspended).toEqual({ ...account, status: 'suspended' });
    const upgraded = await store.setAccountTier(account.id, 'pro');
    expect(upgraded).toEqual({ ...account, status: 'suspended', tier: 'pro' });
    const reactivated = await store.setAccountStatus(account.id, 'active');
    expect(reactivated.status).toBe('active');
    expect(await store.findAccount(account.id)).toEqual({ ...account, tier: 'pro' });

    const events = await store.changesAfter(before);
    expect(events.map((e) => ({ kind: e.kind, subjectId: e.subjectId }))).toEqual([
      { kind: 'account', subjectId: account.id },
      { kind: 'account', subjectId: account.id },
      { kind: 'account', subjectId: account.id },
    ]);
    const ids = events.map((e) => e.id);
    expect(ids.every((id) => Number.isSafeInteger(id) && id > before)).toBe(true);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(3);
    expect(await store.latestChangeId()).toBe(ids[2]);
    // Reading from the middle gives only what came after.
    expect((await store.changesAfter(ids[0]!)).map((e) => e.id)).toEqual(ids.slice(1));
    expect(await store.changesAfter(ids[2]!)).toEqual([]);
  });

  it('records no change event when an account is created', async () => {
    const before = await store.latestChangeId();
    await store.createAccount({ email: 'quiet@example.com', tier: 'free' });
    expect(await store.latestChangeId()).toBe(before);
    expect(await store.changesAfter(before)).toEqual([]);
  });

  it('starts the change feed at zero on an empty database', async () => {
    expect(await store.latestChangeId()).toBe(0);
    expect(await store.changesAfter(0)).toEqual([]);
  });

  it('sees changes written through another handle on the same database', async () => {
    const account = await store.createAccount({ email: 'other@example.com', tier: 'free' });
    const other = opened.openAnother();
    extraHandles.push(other);
    const before = await store.latestChangeId();
    await other.setAccountStatus(account.id, 'suspended');
    expect((await store.changesAfter(before)).map((e) => e.subjectId)).toEqual([account.id]);
    expect((await store.findAccount(account.id))?.status).toBe('suspended');
  });

  it('creates an api key and finds it by hash, by id and in its account list', async () => {
    const account = await store.createAccount({ email: 'keys@example.com', tier: 'free' });
    const key = generateApiKey();
    const record = await store.createApiKey({ accountId: account.id, name: 'ci', keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour });
    expect(record).toMatchObject({
      accountId: account.id,
      name: 'ci',
      keyHash: key.hash,
      prefix: key.prefix,
      lastFour: key.lastFour,
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(record.id).toMatch(/^key_[0-9A-Za-z]{20}$/);

    expect(await store.findKeyByHash(key.hash)).toEqual(record);
    expect(await store.findKeyById(record.id)).toEqual(record);
    expect(await store.listKeys(account.id)).toEqual([record]);
    expect(await store.findKeyByHash(generateApiKey().hash)).toBeUndefined();
    expect(await store.findKeyById('key_00000000000000000000')).toBeUndefined();
  });

  it('lists only the account’s own keys, oldest first', async () => {
    const alice = await store.createAccount({ email: 'alice@example.com', tier: 'free' });
    const bob = await store.createAccount({ email: 'bob@example.com', tier: 'free' });
    const second = await at('2030-01-01T00:00:05.000Z', () => newKey(alice.id, 'second'));
    const first = await at('2030-01-01T00:00:01.000Z', () => newKey(alice.id, 'first'));
    const bobs = await newKey(bob.id, 'bob');

    expect((await store.listKeys(alice.id)).map((k) => k.name)).toEqual(['first', 'second']);
    expect((await store.listKeys(alice.id)).map((k) => k.id)).toEqual([first.record.id, second.record.id]);
    expect(await store.listKeys(bob.id)).toEqual([bobs.record]);
    expect(await store.listKeys('acct_00000000000000000000')).toEqual([]);
  });

  it('rejects a key for an account that does not exist', async () => {
    const key = generateApiKey();
    await expect(
      store.createApiKey({ accountId: 'acct_00000000000000000000', name: 'x', keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour }),
    ).rejects.toThrow();
    expect(await store.findKeyByHash(key.hash)).toBeUndefined();
  });

  it('rejects a second key with the same hash', async () => {
    const account = await store.createAccount({ email: 'samehash@example.com', tier: 'free' });
    const { hash } = await newKey(account.id);
    await expect(store.createApiKey({ accountId: account.id, name: 'again', keyHash: hash, prefix: 'sk-lmg-AAAA', lastFour: 'AAAA' })).rejects.toThrow();
    expect(await store.listKeys(account.id)).toHaveLength(1);
  });

  it('revokes a key idempotently, keeping the time of the first revocation', async () => {
    const account = await store.createAccount({ email: 'revoke@example.com', tier: 'free' });
    const { record, hash } = await newKey(account.id);
    const untouched = await newKey(account.id, 'other');
    const before = await store.latestChangeId();

    const first = await at('2030-03-01T10:00:00.000Z', () => store.revokeKey(record.id));
    expect(first).toEqual({ ...record, revokedAt: '2030-03-01T10:00:00.000Z' });

    const second = await at('2030-03-02T10:00:00.000Z', () => store.revokeKey(record.id));
    expect(second.revokedAt).toBe('2030-03-01T10:00:00.000Z');
    expect(second).toEqual(first);

    expect((await store.findKeyByHash(hash))?.revokedAt).toBe('2030-03-01T10:00:00.000Z');
    expect((await store.findKeyById(record.id))?.revokedAt).toBe('2030-03-01T10:00:00.000Z');
    expect((await store.findKeyById(untouched.record.id))?.revokedAt).toBeNull();

    const events = await store.changesAfter(before);
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events.every((e) => e.kind === 'key' && e.subjectId === record.id)).toBe(true);
  });

  it('writes last_used_at for every key in a touch batch and leaves the others alone', async () => {
    const account = await store.createAccount({ email: 'touch@example.com', tier: 'free' });
    const a = await newKey(account.id, 'a');
    const b = await newKey(account.id, 'b');
    const c = await newKey(account.id, 'c');

    await store.touchKeys(new Map());
    expect((await store.findKeyById(a.record.id))?.lastUsedAt).toBeNull();

    await store.touchKeys(
      new Map([
        [a.record.id, '2030-05-01T12:00:00.000Z'],
        [b.record.id, '2030-05-01T12:00:01.000Z'],
        // An id that no longer exists must not break the batch for the others.
        ['key_00000000000000000000', '2030-05-01T12:00:02.000Z'],
      ]),
    );
    expect((await store.findKeyById(a.record.id))?.lastUsedAt).toBe('2030-05-01T12:00:00.000Z');
    expect((await store.findKeyByHash(b.hash))?.lastUsedAt).toBe('2030-05-01T12:00:01.000Z');
    expect((await store.findKeyById(c.record.id))?.lastUsedAt).toBeNull();

    await store.touchKeys(new Map([[a.record.id, '2030-05-02T00:00:00.000Z']]));
    expect((await store.listKeys(account.id)).find((k) => k.id === a.record.id)?.lastUsedAt).toBe('2030-05-02T00:00:00.000Z');
  });

  it('prunes change events older than the cutoff and keeps the newer ones', async () => {
    const account = await store.createAccount({ email: 'prune@example.com', tier: 'free' });
    await at('2020-01-01T00:00:00.000Z', () => store.setAccountStatus(account.id, 'suspended'));
    await at('2020-01-01T00:00:01.000Z', () => store.setAccountTier(account.id, 'pro'));
    await at('2030-01-01T00:00:00.000Z', () => store.setAccountStatus(account.id, 'active'));
    const all = await store.changesAfter(0);
    expect(all).toHaveLength(3);

    await store.pruneChanges(new Date('2025-01-01T00:00:00.000Z'));
    expect(await store.changesAfter(0)).toEqual([all[2]]);

    await store.pruneChanges(new Date('2020-01-01T00:00:00.000Z'));
    expect(await store.changesAfter(0)).toEqual([all[2]]);
  });

  it('never reuses a change id after every event was pruned', async () => {
    const account = await store.createAccount({ email: 'reuse@example.com', tier: 'free' });
    await store.setAccountStatus(account.id, 'suspended');
    await store.setAccountStatus(account.id, 'active');
    const latest = await store.latestChangeId();

    await store.pruneChanges(new Date(Date.now() + 60_000));
    expect(await store.changesAfter(0)).toEqual([]);

    // A feed that has already seen `latest` must still see the next change.
    await store.setAccountTier(account.id, 'pro');
    const next = await store.changesAfter(latest);
    expect(next).toHaveLength(1);
    expect(next[0]!.id).toBeGreaterThan(latest);
  });

  it('delivers every change to a reader that follows the feed while revocations commit concurrently', async () => {
    // Instances follow the feed by "id after the last one seen"; an id that became visible
    // after a higher one would be skipped forever, leaving a revoked key usable there.
    const account = await store.createAccount({ email: 'feed@example.com', tier: 'free' });
    const keyIds: string[] = [];
    for (let i = 0; i < 300; i++) keyIds.push((await newKey(account.id, `k${i}`)).record.id);
    // On PostgreSQL the handle's pool runs the revocations in concurrent transactions.
    const reader = opened.openAnother();
    extraHandles.push(reader);

    const seen = new Set<string>();
    let lastSeenId = await reader.latestChangeId();
    const follow = async (): Promise<void> => {
      for (const event of await reader.changesAfter(lastSeenId)) {
        lastSeenId = event.id;
        seen.add(event.subjectId);
      }
    };
    let writing = true;
    const following = (async () => {
      while (writing) await follow();
    })();
    await Promise.all(keyIds.map((id) => store.revokeKey(id))).finally(() => (writing = false));
    await following;
    await follow();

    expect(keyIds.filter((id) => !seen.has(id))).toEqual([]);
  });

  it('raises NotFoundInStoreError for unknown account and key ids and records nothing', async () => {
    const before = await store.latestChangeId();
    await expect(store.setAccountStatus('acct_00000000000000000000', 'suspended')).rejects.toBeInstanceOf(NotFoundInStoreError);
    await expect(store.setAccountTier('acct_00000000000000000000', 'pro')).rejects.toBeInstanceOf(NotFoundInStoreError);
    await expect(store.revokeKey('key_00000000000000000000')).rejects.toBeInstanceOf(NotFoundInStoreError);
    await expect(store.revokeKey('key_00000000000000000000')).rejects.toThrow(/key_00000000000000000000/);
    expect(await store.latestChangeId()).toBe(before);
    expect(await store.changesAfter(before)).toEqual([]);
  });
});

describe.each(backends)('store transactions ($name)', (backend) => {
  let opened: OpenedStore;
  beforeEach(async () => {
    opened = await backend.open();
    await opened.store.migrate();
  });
  afterEach(async () => {
    await opened.store.close();
    await opened.cleanup();
  });

  it('commits every write of the callback together', async () => {
    const { store } = opened;
    const before = await store.latestChangeId();
    const account = await store.transaction(async (tx) => {
      const created = await tx.createAccount({ email: 'tx@example.test', tier: 'free' });
      await tx.appendLedgerEntry({ accountId: created.id, kind: 'grant', amountMicros: 42, reason: 'r' });
      await tx.setAccountTier(created.id, 'pro');
      return created;
    });
    expect((await store.findAccount(account.id))?.tier).toBe('pro');
    expect(await store.balanceOf(account.id)).toBe(42);
    expect(await store.sumLedger(account.id)).toBe(42);
    expect((await store.changesAfter(before)).map((change) => change.kind)).toEqual(['balance', 'account']);
  });

  it('rolls every write back when the callback throws, change events included', async () => {
    const { store } = opened;
    const before = await store.latestChangeId();
    await expect(
      store.transaction(async (tx) => {
        const created = await tx.createAccount({ email: 'rollback@example.test', tier: 'free' });
        await tx.appendLedgerEntry({ accountId: created.id, kind: 'grant', amountMicros: 42, reason: 'r' });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await store.findAccount('rollback@example.test')).toBeUndefined();
    expect(await store.changesAfter(before)).toEqual([]);
  });

  it('shows its writes to other connections only once committed', async () => {
    const { store } = opened;
    const other = opened.openAnother();
    try {
      let seenInside: unknown = 'not checked';
      await store.transaction(async (tx) => {
        await tx.createAccount({ email: 'later@example.test', tier: 'free' });
        // On SQLite the writer holds the file's write lock; a reader still sees the last commit.
        seenInside = await other.findAccount('later@example.test');
      });
      expect(seenInside).toBeUndefined();
      expect(await other.findAccount('later@example.test')).toBeDefined();
    } finally {
      await other.close();
    }
  });

  it('runs a nested transaction inside the outer one', async () => {
    const { store } = opened;
    await expect(
      store.transaction(async (tx) => {
        await tx.transaction((inner) => inner.createAccount({ email: 'nested@example.test', tier: 'free' }));
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect(await store.findAccount('nested@example.test')).toBeUndefined();
  });

  it('refuses a second account with the same email, by the unique index', async () => {
    const { store } = opened;
    await store.createAccount({ email: 'twice@example.test', tier: 'free' });
    await expect(store.createAccount({ email: 'Twice@example.test ', tier: 'free' })).rejects.toThrow(EmailTakenError);
  });
});
