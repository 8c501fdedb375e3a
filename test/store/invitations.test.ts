// Invitations to an organisation on SQLite and PostgreSQL: stored by the token's hash,
// listed while open, answered once (of two answers racing, one lands), and accepted with
// the membership in one unit of work (a sign-up that fails leaves the invitation open).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashAccountToken } from '../../src/auth/account-links.js';
import { Commands } from '../../src/commands/commands.js';
import type { Account, Store } from '../../src/store/store.js';
import { STORE_BACKENDS as backends, type OpenedStore } from '../helpers/store-backends.js';

const DAY_MS = 86_400_000;

describe.each(backends)('invitations on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;
  let commands: Commands;
  let owner: Account;
  let org: Account;

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
    commands = new Commands(store);
    owner = await store.createAccount({ email: 'owner@example.test', tier: 'free' });
    org = await commands.orgs.create('Acme', owner, 'free');
  });
  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  const invite = (email: string, role: 'admin' | 'member' = 'member') => commands.invitations.invite(org, { person: owner, role: 'owner' }, email, role);

  it('keeps the hash of the token, lower-cases the address, and lists it while it is open', async () => {
    const { invitation, token } = await invite('Ada@Example.TEST', 'admin');
    expect(invitation).toMatchObject({ orgId: org.id, email: 'ada@example.test', role: 'admin', invitedBy: owner.id, acceptedAt: null, declinedAt: null, revokedAt: null });
    expect(Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt)).toBe(7 * DAY_MS);
    expect(await store.findInvitationByTokenHash(token)).toBeUndefined();
    expect((await store.findInvitationByTokenHash(hashAccountToken(token)))?.id).toBe(invitation.id);
    expect((await store.listPendingInvitations(org.id, new Date().toISOString())).map((i) => i.id)).toEqual([invitation.id]);
    expect(await store.listPendingInvitations(org.id, new Date(Date.now() + 8 * DAY_MS).toISOString())).toEqual([]);
  });

  it('an invitation is answered once: a second answer finds it answered', async () => {
    const { invitation } = await invite('ada@example.test');
    const [first, second] = await Promise.all([
      store.answerInvitation(invitation.id, 'accepted', new Date().toISOString()),
      store.answerInvitation(invitation.id, 'revoked', new Date().toISOString()),
    ]);
    expect([first, second].filter(Boolean)).toHaveLength(1);
    expect(await store.listPendingInvitations(org.id, new Date().toISOString())).toEqual([]);
  });

  it('accepting joins with the role in the same unit of work; a sign-up refused leaves the invitation open', async () => {
    const ada = await store.createAccount({ email: 'ada@example.test', tier: 'free' });
    const { token } = await invite('ada@example.test', 'admin');
    await expect(commands.invitations.acceptBySignUp(token, { name: null, tier: 'free', passwordHash: 'x', creditsMicros: 0 })).rejects.toMatchObject({ code: 'email_taken' });
    expect(await store.findMembership(org.id, ada.id)).toBeUndefined();
    expect(await store.listPendingInvitations(org.id, new Date().toISOString())).toHaveLength(1);

    await commands.invitations.accept(token, ada);
    expect((await store.findMembership(org.id, ada.id))?.role).toBe('admin');
    await commands.invitations.accept(token, ada);
    await expect(commands.invitations.decline(token)).rejects.toMatchObject({ code: 'invitation_accepted' });
  });

  it('a new person signs up through the link: account and membership together', async () => {
    const { token } = await invite('new@example.test');
    const { account } = await commands.invitations.acceptBySignUp(token, { name: 'New', tier: 'free', passwordHash: 'x', creditsMicros: 0 });
    expect(account.email).toBe('new@example.test');
    expect((await store.findMembership(org.id, account.id))?.role).toBe('member');
    await expect(commands.invitations.acceptBySignUp(token, { name: null, tier: 'free', passwordHash: 'x', creditsMicros: 0 })).rejects.toMatchObject({ code: 'invitation_accepted' });
  });

  it('an admin may not invite an owner, a member may not invite at all', async () => {
    await expect(commands.invitations.invite(org, { person: owner, role: 'admin' }, 'x@example.test', 'owner')).rejects.toMatchObject({ code: 'org_role_required' });
    await expect(commands.invitations.invite(org, { person: owner, role: 'member' }, 'x@example.test', 'member')).rejects.toMatchObject({ code: 'org_role_required' });
    expect(await store.listPendingInvitations(org.id, new Date().toISOString())).toEqual([]);
  });
});
