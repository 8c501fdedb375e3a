// Invitations to an organisation: mailed through a real SMTP server on loopback (or, without
// SMTP, handed back as a link), accepted only by the invited address, once, before they
// expire, declined, withdrawn; who may invite whom; and an address without an account that
// signs up through the link and lands in the organisation.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp-inbox.js';
import { DashboardClient, expectUnifiedError, sessionClient } from './dashboard-client.js';

const ORIGIN = 'https://dash.example.test';
let orgs = 0;

/** A signed-in owner acting for a new organisation. */
async function ownerOfNewOrg(t: TestApp): Promise<{ owner: DashboardClient; orgId: string }> {
  const owner = await sessionClient(t);
  const created = await owner.post('/orgs', { name: `Invites ${++orgs} ${process.pid}` });
  expect(created.status, created.text).toBe(201);
  return { owner, orgId: created.body.org.id as string };
}

const tokenOf = (link: string): string => new URL(link).pathname.slice('/invite/'.length);

describe('invitations with mail', () => {
  let t: TestApp;
  let inbox: SmtpInbox;

  beforeAll(async () => {
    inbox = await startSmtpInbox();
    t = await startApp({
      overrides: {
        server: { port: 0, public_url: ORIGIN },
        signup: { per_address_per_hour: 10_000, credits: 0 },
        smtp: { host: '127.0.0.1', port: inbox.port, from: 'lmgate <no-reply@example.test>' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await inbox.close();
  });

  /** Invites `email` with `role`, and reads the link out of the mail it was sent. */
  async function inviteByMail(owner: DashboardClient, email: string, role = 'member'): Promise<{ id: string; token: string }> {
    const sent = await owner.post('/orgs/current/invitations', { email, role });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body).toMatchObject({ mailed: true, link: null, invitation: { email: email.toLowerCase(), role } });
    const mail = await inbox.next(email.toLowerCase());
    const link = /https:\/\/\S+\/invite\/\S+/.exec(mail.text)![0];
    expect(link.startsWith(`${ORIGIN}/invite/`)).toBe(true);
    return { id: sent.body.invitation.id as string, token: tokenOf(link) };
  }

  it('mails the link to the address; its owner opens it, accepts, joins with the role and acts for the organisation', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const invitee = await sessionClient(t);
    const email = invitee.account.email as string;
    const sent = await owner.post('/orgs/current/invitations', { email: email.toUpperCase(), role: 'admin' });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body).toEqual({
      invitation: { id: expect.any(String), email, role: 'admin', createdAt: expect.any(String), expiresAt: expect.any(String) },
      mailed: true,
      link: null,
    });
    expect(Date.parse(sent.body.invitation.expiresAt) - Date.parse(sent.body.invitation.createdAt)).toBe(7 * 24 * 3600 * 1000);
    const mail = await inbox.next(email);
    expect(mail.subject).toMatch(/^You are invited to join Invites \d+/);
    const token = tokenOf(/https:\/\/\S+\/invite\/\S+/.exec(mail.text)![0]);
    // The store keeps only the token's hash.
    const stored = await t.store.findInvitationByTokenHash(createHash('sha256').update(token).digest('hex'));
    expect(stored?.id).toBe(sent.body.invitation.id);

    expect((await owner.get('/orgs/current/invitations')).body.invitations.map((i: { id: string }) => i.id)).toEqual([sent.body.invitation.id]);
    const preview = await new DashboardClient(t).get(`/invitations/${token}`);
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body).toEqual({ orgName: expect.stringMatching(/^Invites /), email, role: 'admin', expiresAt: sent.body.invitation.expiresAt, hasAccount: true });

    const accepted = await invitee.post(`/invitations/${token}/accept`);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.org).toEqual({ id: orgId, name: expect.any(String), role: 'admin' });
    expect((await invitee.get('/orgs')).body.current).toMatchObject({ id: orgId, name: expect.any(String), role: 'admin' });
    expect((await t.store.findMembership(orgId, invitee.account.id))?.role).toBe('admin');
    // Accepting again is the same as once; the link no longer offers anything to anyone else.
    expect((await invitee.post(`/invitations/${token}/accept`)).status).toBe(200);
    expectUnifiedError(await new DashboardClient(t).get(`/invitations/${token}`), 410, 'This invitation has already been used.');
    expect((await owner.get('/orgs/current/invitations')).body.invitations).toEqual([]);
  });

  it('refuses the invitation to a signed-in person with another address, and it stays open', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const { token } = await inviteByMail(owner, `someone-${process.pid}@example.test`);
    const stranger = await sessionClient(t);
    expectUnifiedError(await stranger.post(`/invitations/${token}/accept`), 403);
    expect(await t.store.findMembership(orgId, stranger.account.id)).toBeUndefined();
    expect((await new DashboardClient(t).get(`/invitations/${token}`)).status).toBe(200);
    expectUnifiedError(await new DashboardClient(t).post(`/invitations/${token}/accept`), 401);
  });

  it('an expired invitation is refused with 410, to look at and to accept', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const invitee = await sessionClient(t);
    const token = 'expired-token-' + process.pid;
    await t.store.createInvitation({
      orgId,
      email: invitee.account.email,
      role: 'member',
      tokenHash: createHash('sha256').update(token).digest('hex'),
      invitedBy: owner.account.id,
      createdAt: new Date(Date.now() - 8 * 86_400_000).toISOString(),
      expiresAt: new Date(Date.now() - 86_400_000).toISOString(),
    });
    expectUnifiedError(await new DashboardClient(t).get(`/invitations/${token}`), 410, 'This invitation has expired. Ask the organisation for a new one.');
    expectUnifiedError(await invitee.post(`/invitations/${token}/accept`), 410);
    expect(await t.store.findMembership(orgId, invitee.account.id)).toBeUndefined();
    expect((await owner.get('/orgs/current/invitations')).body.invitations).toEqual([]);
    expectUnifiedError(await new DashboardClient(t).get('/invitations/never-issued'), 404);
  });

  it('a declined invitation cannot be accepted', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const invitee = await sessionClient(t);
    const { token } = await inviteByMail(owner, invitee.account.email);
    expect((await new DashboardClient(t).post(`/invitations/${token}/decline`)).status).toBe(204);
    expect((await new DashboardClient(t).post(`/invitations/${token}/decline`)).status).toBe(204);
    expectUnifiedError(await invitee.post(`/invitations/${token}/accept`), 410, 'This invitation was declined.');
    expect(await t.store.findMembership(orgId, invitee.account.id)).toBeUndefined();
    expect((await owner.get('/orgs/current/invitations')).body.invitations).toEqual([]);
  });

  it('a withdrawn invitation leaves the list and its link stops working', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const invitee = await sessionClient(t);
    const { id, token } = await inviteByMail(owner, invitee.account.email);
    expect((await owner.delete(`/orgs/current/invitations/${id}`)).status).toBe(204);
    expect((await owner.get('/orgs/current/invitations')).body.invitations).toEqual([]);
    expectUnifiedError(await owner.delete(`/orgs/current/invitations/${id}`), 410);
    expectUnifiedError(await new DashboardClient(t).get(`/invitations/${token}`), 410, 'This invitation was withdrawn by the organisation.');
    expectUnifiedError(await invitee.post(`/invitations/${token}/accept`), 410);
    expect(await t.store.findMembership(orgId, invitee.account.id)).toBeUndefined();
    // Another organisation's owner cannot withdraw it.
    const { owner: other } = await ownerOfNewOrg(t);
    const second = await inviteByMail(owner, invitee.account.email);
    expectUnifiedError(await other.delete(`/orgs/current/invitations/${second.id}`), 404);
  });

  it('a member cannot invite, an admin cannot invite an owner, and nobody invites someone who belongs', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const [member, admin] = [await sessionClient(t), await sessionClient(t)];
    expect((await owner.post('/orgs/current/members', { email: member.account.email, role: 'member' })).status).toBe(200);
    expect((await owner.post('/orgs/current/members', { email: admin.account.email, role: 'admin' })).status).toBe(200);
    for (const person of [member, admin]) expect((await person.post('/orgs/switch', { orgId })).status).toBe(204);

    expectUnifiedError(await member.post('/orgs/current/invitations', { email: 'x@example.test', role: 'member' }), 403);
    expectUnifiedError(await member.get('/orgs/current/invitations'), 403);
    expectUnifiedError(await admin.post('/orgs/current/invitations', { email: 'boss@example.test', role: 'owner' }), 403);
    expect((await admin.post('/orgs/current/invitations', { email: `helper-${process.pid}@example.test`, role: 'admin' })).status).toBe(201);
    expect((await owner.post('/orgs/current/invitations', { email: `boss-${process.pid}@example.test`, role: 'owner' })).status).toBe(201);
    expectUnifiedError(await owner.post('/orgs/current/invitations', { email: member.account.email, role: 'admin' }), 409);
    expectUnifiedError(await owner.post('/orgs/current/invitations', { email: 'not an address', role: 'member' }), 422);
    // A person's own account has no invitations.
    expect((await owner.post('/orgs/switch', { orgId: null })).status).toBe(204);
    expectUnifiedError(await owner.post('/orgs/current/invitations', { email: 'x@example.test', role: 'member' }), 404);
    await inbox.next(`helper-${process.pid}@example.test`);
    await inbox.next(`boss-${process.pid}@example.test`);
  });

  it('an address without an account signs up through the link, signed in and acting for the organisation', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const email = `newcomer-${process.pid}@example.test`;
    const { token } = await inviteByMail(owner, email, 'billing');
    expect((await new DashboardClient(t).get(`/invitations/${token}`)).body.hasAccount).toBe(false);

    const browser = new DashboardClient(t);
    const signedUp = await browser.post(`/invitations/${token}/signup`, { password: 'correct horse battery', name: 'New Comer' });
    expect(signedUp.status, signedUp.text).toBe(201);
    expect(signedUp.body.account).toMatchObject({ email, name: 'New Comer' });
    browser.csrfToken = signedUp.body.csrfToken;
    expect((await browser.get('/orgs')).body.current).toMatchObject({ id: orgId, name: expect.any(String), role: 'billing' });
    const account = (await t.store.findAccount(email))!;
    expect((await t.store.findMembership(orgId, account.id))?.role).toBe('billing');
    expect((await new DashboardClient(t).signIn(email, 'correct horse battery')).status).toBe(200);
    // The link is used: neither a second sign-up nor a look at it gets anywhere.
    expectUnifiedError(await new DashboardClient(t).post(`/invitations/${token}/signup`, { password: 'another good password' }), 410);
  });

  it('signing up through the link of an address that has an account is refused, and nothing joins', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const invitee = await sessionClient(t);
    const { token } = await inviteByMail(owner, invitee.account.email);
    expectUnifiedError(await new DashboardClient(t).post(`/invitations/${token}/signup`, { password: 'correct horse battery' }), 409);
    expect(await t.store.findMembership(orgId, invitee.account.id)).toBeUndefined();
    expect((await invitee.post(`/invitations/${token}/accept`)).status).toBe(200);
  });
});

describe('invitations without SMTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ overrides: { server: { port: 0, public_url: ORIGIN } } });
  });
  afterAll(() => t.close());

  it('hands back the link to pass on, which works as the mailed one does', async () => {
    const { owner, orgId } = await ownerOfNewOrg(t);
    const invitee = await sessionClient(t);
    const sent = await owner.post('/orgs/current/invitations', { email: invitee.account.email, role: 'member' });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.mailed).toBe(false);
    expect(sent.body.link).toMatch(new RegExp(`^${ORIGIN}/invite/[A-Za-z0-9_-]{43}$`));
    const accepted = await invitee.post(`/invitations/${tokenOf(sent.body.link)}/accept`);
    expect(accepted.status, accepted.text).toBe(200);
    expect((await t.store.findMembership(orgId, invitee.account.id))?.role).toBe('member');
  });

  it('a second invitation of the same address withdraws the first', async () => {
    const { owner } = await ownerOfNewOrg(t);
    const first = await owner.post('/orgs/current/invitations', { email: `twice-${process.pid}@example.test`, role: 'member' });
    const second = await owner.post('/orgs/current/invitations', { email: `twice-${process.pid}@example.test`, role: 'admin' });
    expect((await owner.get('/orgs/current/invitations')).body.invitations.map((i: { id: string }) => i.id)).toEqual([second.body.invitation.id]);
    expectUnifiedError(await new DashboardClient(t).get(`/invitations/${tokenOf(first.body.link)}`), 410);
  });
});
