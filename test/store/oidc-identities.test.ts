// OpenID Connect identities and the way sessions were made, on SQLite and PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Commands } from '../../src/commands/commands.js';
import { EmailTakenError, type Store } from '../../src/store/store.js';
import { isUniqueViolation } from '../../src/store/sql.js';
import { STORE_BACKENDS as backends, type OpenedStore } from '../helpers/store-backends.js';

const ISSUER = 'https://id.example.test';

describe.each(backends)('OpenID Connect identities on $name', (backend) => {
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

  it('an identity is found by issuer and subject, and by its account, and notes each sign-in', async () => {
    const account = await store.createAccount({ email: 'ada@example.test', tier: 'free' });
    await store.linkOidcIdentity({ issuer: ISSUER, subject: 'sub-1', accountId: account.id, email: 'ada@example.test' }, '2026-01-01T00:00:00.000Z');
    expect(await store.findOidcIdentity(ISSUER, 'sub-1')).toEqual({
      issuer: ISSUER,
      subject: 'sub-1',
      accountId: account.id,
      email: 'ada@example.test',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastSignInAt: '2026-01-01T00:00:00.000Z',
    });
    expect(await store.findOidcIdentity('https://other.example.test', 'sub-1')).toBeUndefined();
    expect((await store.findOidcIdentityOfAccount(ISSUER, account.id))?.subject).toBe('sub-1');
    expect(await store.findOidcIdentityOfAccount('https://other.example.test', account.id)).toBeUndefined();

    await store.recordOidcSignIn(ISSUER, 'sub-1', 'ada@new.example.test', '2026-02-01T00:00:00.000Z');
    expect(await store.findOidcIdentity(ISSUER, 'sub-1')).toMatchObject({ email: 'ada@new.example.test', createdAt: '2026-01-01T00:00:00.000Z', lastSignInAt: '2026-02-01T00:00:00.000Z' });
  });

  it('a subject links to one account only', async () => {
    const ada = await store.createAccount({ email: 'ada@example.test', tier: 'free' });
    const bob = await store.createAccount({ email: 'bob@example.test', tier: 'free' });
    await store.linkOidcIdentity({ issuer: ISSUER, subject: 'sub-1', accountId: ada.id, email: 'ada@example.test' }, '2026-01-01T00:00:00.000Z');
    const second = store.linkOidcIdentity({ issuer: ISSUER, subject: 'sub-1', accountId: bob.id, email: 'bob@example.test' }, '2026-01-01T00:00:00.000Z');
    await expect(second).rejects.toSatisfy(isUniqueViolation);
  });

  it('an account made at first sign-in comes with its identity and credits, or not at all', async () => {
    const commands = new Commands(store);
    const account = await commands.oidcIdentities.createAccount(
      { email: 'grace@example.test', name: 'Grace', tier: 'free', creditsMicros: 1_000_000 },
      { issuer: ISSUER, subject: 'sub-g', email: 'grace@example.test' },
    );
    expect(await store.findPasswordHash(account.id)).toBeUndefined();
    expect(await store.balanceOf(account.id)).toBe(1_000_000);
    expect((await store.findOidcIdentity(ISSUER, 'sub-g'))?.accountId).toBe(account.id);

    const taken = commands.oidcIdentities.createAccount({ email: 'grace@example.test', name: null, tier: 'free', creditsMicros: 0 }, { issuer: ISSUER, subject: 'sub-h', email: 'grace@example.test' });
    await expect(taken).rejects.toBeInstanceOf(EmailTakenError);
    expect(await store.findOidcIdentity(ISSUER, 'sub-h')).toBeUndefined();
  });

  it('a session keeps how it was made', async () => {
    const account = await store.createAccount({ email: 'ada@example.test', tier: 'free' });
    const session = { accountId: account.id, csrfToken: 'csrf', createdAt: '2026-01-01T00:00:00.000Z', expiresAt: '2099-01-01T00:00:00.000Z', lastSeenAt: '2026-01-01T00:00:00.000Z', orgId: null };
    await store.createSession({ ...session, tokenHash: 'by-oidc', authMethod: 'oidc' });
    await store.createSession({ ...session, tokenHash: 'by-password', authMethod: 'password' });
    expect((await store.findSession('by-oidc'))?.authMethod).toBe('oidc');
    expect((await store.findSession('by-password'))?.authMethod).toBe('password');
  });
});
