// Step 1 of the request path against a real SQLite store: header → key → account, cache
// first, and revocations made elsewhere (the CLI) reaching the cache through the change feed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { Authenticator } from '../../src/auth/authenticate.js';
import { KeyCache } from '../../src/auth/key-cache.js';
import { Commands } from '../../src/commands/commands.js';
import { ChangeFeed } from '../../src/cluster/change-feed.js';
import { InvalidApiKeyError, KeyRevokedError, UnauthenticatedError } from '../../src/errors.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Account, ChangeEvent, Store } from '../../src/store/store.js';

interface StoreCalls {
  findKeyByHash: number;
  findAccount: number;
}

/** The real store, counting the lookups the hot path should avoid. */
function countingStore(store: Store): { store: Store; calls: StoreCalls } {
  const calls: StoreCalls = { findKeyByHash: 0, findAccount: 0 };
  const proxy = new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'findKeyByHash' || property === 'findAccount') calls[property]++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

describe('Authenticator', () => {
  let dir: string;
  let sqlitePath: string;
  let realStore: Store;
  let store: Store;
  let calls: StoreCalls;
  let cache: KeyCache;
  let authenticator: Authenticator;
  let account: Account;
  const toClose: Array<() => Promise<void>> = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lmgate-auth-'));
    sqlitePath = join(dir, 'lmgate.db');
    realStore = openStore({ sqlitePath });
    await realStore.migrate();
    ({ store, calls } = countingStore(realStore));
    cache = new KeyCache();
    authenticator = new Authenticator(store, cache);
    account = await realStore.createAccount({ email: 'owner@example.com', tier: 'free' });
  });

  afterEach(async () => {
    for (const close of toClose.splice(0).reverse()) await close();
    await realStore.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('returns the key and its account for a valid key', async () => {
    const { record, secret } = await new Commands(realStore).keys.create(account.id, 'ci');
    const principal = await authenticator.authenticate(`Bearer ${secret}`);
    expect(principal.key).toEqual(record);
    expect(principal.account).toEqual(account);
  });

  it('rejects a well-formed key that is not stored with InvalidApiKeyError after one lookup', async () => {
    await new Commands(realStore).keys.create(account.id, 'real');
    const unknown = generateApiKey().secret;
    await expect(authenticating(authenticator, `Bearer ${unknown}`)).rejects.toBeInstanceOf(InvalidApiKeyError);
    expect(calls.findKeyByHash).toBe(1);
    // The miss is remembered too, so repeating a wrong key does not reach the store.
    await expect(authenticating(authenticator, `Bearer ${unknown}`)).rejects.toBeInstanceOf(InvalidApiKeyError);
    expect(calls.findKeyByHash).toBe(1);
  });

  it('rejects a malformed key with InvalidApiKeyError without touching the store', async () => {
    const { secret } = await new Commands(realStore).keys.create(account.id, 'real');
    const lastChar = secret.at(-1) === 'A' ? 'B' : 'A';
    const wrongChecksum = secret.slice(0, -1) + lastChar;
    const typo = secret.slice(0, 20) + (secret[20] === 'x' ? 'y' : 'x') + secret.slice(21);
    for (const candidate of [wrongChecksum, typo, 'sk-lmg-short', 'not-a-key', secret + 'A']) {
      await expect(authenticating(authenticator, `Bearer ${candidate}`), candidate).rejects.toBeInstanceOf(InvalidApiKeyError);
    }
    expect(calls.findKeyByHash).toBe(0);
    expect(calls.findAccount).toBe(0);
  });

  it('rejects a missing or malformed header as unauthenticated without touching the store', async () => {
    const { secret } = await new Commands(realStore).keys.create(account.id, 'real');
    for (const header of [undefined, '', `bearer ${secret}`, `Bearer  ${secret}`, `Basic ${secret}`, secret]) {
      await expect(authenticating(authenticator, header), String(header)).rejects.toBeInstanceOf(UnauthenticatedError);
    }
    expect(calls.findKeyByHash).toBe(0);
  });

  it('rejects a revoked key with KeyRevokedError', async () => {
    const { record, secret } = await new Commands(realStore).keys.create(account.id, 'old');
    await realStore.revokeKey(record.id);
    await expect(authenticating(authenticator, `Bearer ${secret}`)).rejects.toBeInstanceOf(KeyRevokedError);
    // And again from the cache, without another lookup.
    await expect(authenticating(authenticator, `Bearer ${secret}`)).rejects.toBeInstanceOf(KeyRevokedError);
    expect(calls.findKeyByHash).toBe(1);
  });

  it('keeps no raw key: caches hold its SHA-256 only', async () => {
    const { record, secret } = await new Commands(realStore).keys.create(account.id, 'held');
    await authenticator.authenticate(`Bearer ${secret}`);
    const held = stringsHeldBy([authenticator, cache]);
    expect(held.has(record.keyHash)).toBe(true); // the walk does reach the cache's entries
    expect([...held].filter((text) => text.includes(secret.slice(7)))).toEqual([]);
  });

  it('answers a second authentication of the same key from the cache', async () => {
    const { secret } = await new Commands(realStore).keys.create(account.id, 'hot');
    const first = await authenticator.authenticate(`Bearer ${secret}`);
    expect(calls).toEqual({ findKeyByHash: 1, findAccount: 1 });
    const second = await authenticator.authenticate(`Bearer ${secret}`);
    expect(second).toEqual(first);
    expect(calls).toEqual({ findKeyByHash: 1, findAccount: 1 });
  });

  it('does not mix up two keys of the same account in the cache', async () => {
    const a = await new Commands(realStore).keys.create(account.id, 'a');
    const b = await new Commands(realStore).keys.create(account.id, 'b');
    expect((await authenticator.authenticate(`Bearer ${a.secret}`)).key.id).toBe(a.record.id);
    expect((await authenticator.authenticate(`Bearer ${b.secret}`)).key.id).toBe(b.record.id);
    expect((await authenticator.authenticate(`Bearer ${a.secret}`)).key.id).toBe(a.record.id);
    expect(calls.findKeyByHash).toBe(2);
    expect(calls.findAccount).toBe(1);
  });

  it('rejects a cached key as revoked once the cache forgets it after the revocation', async () => {
    const { record, secret } = await new Commands(realStore).keys.create(account.id, 'cached');
    await authenticator.authenticate(`Bearer ${secret}`);
    await realStore.revokeKey(record.id);

    cache.forgetKey(record.id);
    await expect(authenticating(authenticator, `Bearer ${secret}`)).rejects.toBeInstanceOf(KeyRevokedError);
    expect(calls.findKeyByHash).toBe(2);
  });

  it('rejects a key revoked through a second store handle once the change feed has polled', async () => {
    const { record, secret } = await new Commands(realStore).keys.create(account.id, 'served');
    const other = await new Commands(realStore).keys.create(account.id, 'unaffected');
    const events: ChangeEvent[] = [];
    const errors: unknown[] = [];
    // Wired as app.ts wires it. The timer is set far out so that only the polls below run.
    const feed = new ChangeFeed(
      store,
      (event) => {
        events.push(event);
        if (event.kind === 'key') cache.forgetKey(event.subjectId);
        else cache.forgetAccount(event.subjectId);
      },
      (err) => errors.push(err),
      60_000,
    );
    await feed.start();
    toClose.push(() => feed.stop());

    await authenticator.authenticate(`Bearer ${secret}`);
    await authenticator.authenticate(`Bearer ${other.secret}`);

    // The operator's CLI: its own handle on the same file.
    const cli = openStore({ sqlitePath });
    toClose.push(() => cli.close());
    await cli.revokeKey(record.id);

    for (let polls = 0; polls < 20 && !events.some((e) => e.subjectId === record.id); polls++) await feed.poll();
    expect(events.map((e) => ({ kind: e.kind, subjectId: e.subjectId }))).toEqual([{ kind: 'key', subjectId: record.id }]);
    expect(errors).toEqual([]);

    await expect(authenticating(authenticator, `Bearer ${secret}`)).rejects.toBeInstanceOf(KeyRevokedError);
    expect((await authenticator.authenticate(`Bearer ${other.secret}`)).key.id).toBe(other.record.id);
  });

  it('hands out the new account state after a suspension through a second handle reaches the feed', async () => {
    const { secret } = await new Commands(realStore).keys.create(account.id, 'served');
    const feed = new ChangeFeed(
      store,
      (event) => (event.kind === 'key' ? cache.forgetKey(event.subjectId) : cache.forgetAccount(event.subjectId)),
      (err) => {
        throw err;
      },
      60_000,
    );
    await feed.start();
    toClose.push(() => feed.stop());
    expect((await authenticator.authenticate(`Bearer ${secret}`)).account.status).toBe('active');

    const cli = openStore({ sqlitePath });
    toClose.push(() => cli.close());
    await cli.setAccountStatus(account.id, 'suspended');
    expect((await authenticator.authenticate(`Bearer ${secret}`)).account.status).toBe('active');

    for (let polls = 0; polls < 20 && cache.getAccount(account.id) !== undefined; polls++) await feed.poll();
    expect((await authenticator.authenticate(`Bearer ${secret}`)).account.status).toBe('suspended');
  });

  it('does not replay changes made before the feed started', async () => {
    const { record } = await new Commands(realStore).keys.create(account.id, 'old');
    await realStore.revokeKey(record.id);
    await realStore.setAccountTier(account.id, 'pro');
    const events: ChangeEvent[] = [];
    const feed = new ChangeFeed(store, (event) => void events.push(event), () => undefined, 60_000);
    await feed.start();
    toClose.push(() => feed.stop());
    await feed.poll();
    expect(events).toEqual([]);

    await realStore.setAccountStatus(account.id, 'suspended');
    await feed.poll();
    await feed.poll();
    expect(events.map((e) => e.subjectId)).toEqual([account.id]);
  });
});

/** authenticate answers synchronously when it can: a sync throw becomes a rejection here. */
async function authenticating(authenticator: Authenticator, header: string | undefined): Promise<unknown> {
  return authenticator.authenticate(header);
}

/** Every string reachable from `roots` through objects, arrays, Maps and Sets. */
function stringsHeldBy(roots: unknown[]): Set<string> {
  const strings = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') strings.add(value);
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (value instanceof Map) for (const [key, entry] of value) (visit(key), visit(entry));
    else if (value instanceof Set) for (const entry of value) visit(entry);
    else for (const entry of Object.values(value)) visit(entry);
  };
  roots.forEach(visit);
  return strings;
}
