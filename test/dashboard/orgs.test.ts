// Organisations in the dashboard: made by a customer, switched to and from, their members
// and budgets managed by role. A member of one organisation never reads or changes
// another's; a `member` manages only their own keys and sees only their own usage; a
// removed member's session stops acting for the organisation at once, and the keys they
// made stop with them when the admin chooses.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { Sessions } from '../../src/web-session/sessions.js';
import { DashboardClient, expectUnifiedError, sessionClient } from './dashboard-client.js';

const OVERRIDES = {
  default_tier: 'metered',
  tiers: { metered: { rpm: 100_000, tpm: 100_000_000, concurrency: 100, models: ['*'] } },
  models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 1000, price: { input: 1000, output: 2000 } } },
};

describe('organisations in the dashboard', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ overrides: OVERRIDES });
  });
  afterAll(() => t.close());

  const patch = (client: DashboardClient, path: string, body: unknown) => client.request('PATCH', path, { body });
  const put = (client: DashboardClient, path: string, body: unknown) => client.request('PUT', path, { body });
  let teams = 0;

  /** An owner's new organisation (the owner's session acts for it), and people added with roles, each switched to it. */
  async function team(roles: ('admin' | 'billing' | 'member')[]): Promise<{ orgId: string; owner: DashboardClient; people: DashboardClient[] }> {
    const owner = await sessionClient(t);
    const created = await owner.post('/orgs', { name: `Team ${++teams} ${process.pid}` });
    expect(created.status, created.text).toBe(201);
    const orgId = created.body.org.id as string;
    const people: DashboardClient[] = [];
    for (const role of roles) {
      const person = await sessionClient(t);
      expect((await owner.post('/orgs/current/members', { email: person.account.email, role })).status).toBe(200);
      expect((await person.post('/orgs/switch', { orgId })).status).toBe(204);
      people.push(person);
    }
    return { orgId, owner, people };
  }

  it('a customer makes an organisation, acts for it, and switches back to their own account', async () => {
    const { orgId, owner, people } = await team(['member']);
    const everything = ['members', 'keys', 'budgets', 'webhooks', 'billing', 'usage', 'owners'];
    expect((await owner.get('/orgs')).body).toEqual({
      current: { id: orgId, name: expect.stringMatching(/^Team /), role: 'owner', permissions: everything },
      orgs: [{ id: orgId, name: expect.any(String), role: 'owner', permissions: everything }],
    });
    expect((await people[0]!.get('/orgs')).body.current).toMatchObject({ role: 'member', permissions: [] });
    const detail = (await owner.get('/orgs/current')).body;
    expect(detail.members.map((m: { role: string }) => m.role)).toEqual(['owner', 'member']);
    // The wallet is the organisation's: a grant to it shows in its overview, not in the owner's own.
    await t.app.commands.credits.grant({ accountId: orgId, amountMicros: 5_000_000, reason: 'test' });
    expect((await people[0]!.get('/overview')).body.balanceMicros).toBe(5_000_000);
    expect((await owner.post('/orgs/switch', { orgId: null })).status).toBe(204);
    expect((await owner.get('/overview')).body.balanceMicros).toBe(0);
    expect((await owner.get('/orgs')).body.current).toBeNull();
    expectUnifiedError(await owner.get('/orgs/current'), 404);
  });

  it('keys belong to the organisation and name their maker; a member sees and changes only their own, and only their own usage', async () => {
    const { orgId, owner, people } = await team(['member', 'admin']);
    const [member, admin] = people as [DashboardClient, DashboardClient];
    await t.app.commands.credits.grant({ accountId: orgId, amountMicros: 50_000_000, reason: 'test' });
    const ownerKey = (await owner.post('/keys', { name: 'owner key' })).body;
    const memberKey = (await member.post('/keys', { name: 'member key' })).body;
    expect((await t.store.findKeyById(memberKey.key.id))).toMatchObject({ accountId: orgId, memberId: member.account.id });

    expect((await member.get('/keys')).body.keys.map((k: { name: string }) => k.name)).toEqual(['member key']);
    expect((await admin.get('/keys')).body.keys.map((k: { name: string }) => k.name).sort()).toEqual(['member key', 'owner key']);
    expectUnifiedError(await member.delete(`/keys/${ownerKey.key.id}`), 404);
    expect((await t.store.findKeyById(ownerKey.key.id))?.revokedAt).toBeNull();

    for (const secret of [ownerKey.secret, memberKey.secret]) {
      await t.client(secret).chat.completions.create({ model: 'priced-echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    }
    await t.flushUsage();
    const ids = (body: { recent: { keyId: string }[] }) => body.recent.map((r) => r.keyId).sort();
    expect(ids((await member.get('/usage')).body)).toEqual([memberKey.key.id]);
    expect(ids((await admin.get('/usage')).body)).toEqual([memberKey.key.id, ownerKey.key.id].sort());
    expect(ids((await admin.get(`/usage?member=${member.account.id}`)).body)).toEqual([memberKey.key.id]);
    expect((await member.get('/requests')).body.requests.map((r: { keyId: string }) => r.keyId)).toEqual([memberKey.key.id]);
    // A member may still ask for someone else's: they get their own.
    expect((await member.get(`/requests?member=${owner.account.id}`)).body.requests.map((r: { keyId: string }) => r.keyId)).toEqual([memberKey.key.id]);
    const csv = (await member.get('/usage.csv')).text;
    expect(csv).toContain(memberKey.key.id);
    expect(csv).not.toContain(ownerKey.key.id);
  });

  it('each role may do what its table says, and no more', async () => {
    const { owner, people } = await team(['member', 'billing', 'admin']);
    const [member, billing, admin] = people as [DashboardClient, DashboardClient, DashboardClient];
    const outsider = await sessionClient(t);

    // Members and budgets: admins and owners.
    for (const caller of [member, billing]) {
      expectUnifiedError(await caller.post('/orgs/current/members', { email: outsider.account.email, role: 'member' }), 403);
      expectUnifiedError(await put(caller, '/orgs/current/budgets', { memberId: null, monthlyMicros: 1_000 }), 403);
      expectUnifiedError(await patch(caller, `/orgs/current/members/${member.account.id}`, { role: 'admin' }), 403);
    }
    expect((await put(admin, '/orgs/current/budgets', { memberId: member.account.id, monthlyMicros: 2_000_000 })).body.budgets).toEqual([{ memberId: member.account.id, monthlyMicros: 2_000_000, spentMicros: 0 }]);
    // Owners alone give or take the owner role.
    expectUnifiedError(await patch(admin, `/orgs/current/members/${member.account.id}`, { role: 'owner' }), 403);
    expectUnifiedError(await admin.delete(`/orgs/current/members/${owner.account.id}`), 403);
    // Payments, plans and the ledger: billing and owners.
    expectUnifiedError(await member.get('/ledger'), 403);
    expectUnifiedError(await admin.post('/redeem', { code: 'LMG-AAAA-BBBB-CCCC' }), 403);
    expect((await billing.get('/ledger')).status).toBe(200);
    // Webhooks: admins and owners.
    expectUnifiedError(await member.get('/webhooks'), 403);
    expect((await admin.get('/webhooks')).status).toBe(200);
    expect((await patch(owner, `/orgs/current/members/${admin.account.id}`, { role: 'owner' })).status).toBe(200);
    // The last owner cannot step down; with another owner, they can.
    expect((await patch(owner, `/orgs/current/members/${owner.account.id}`, { role: 'admin' })).status).toBe(200);
    expectUnifiedError(await patch(admin, `/orgs/current/members/${admin.account.id}`, { role: 'member' }), 409);
  });

  it('a member of one organisation never reads or changes another’s', async () => {
    const a = await team(['member']);
    const b = await team(['member']);
    const intruder = a.owner;
    expectUnifiedError(await intruder.post('/orgs/switch', { orgId: b.orgId }), 404);
    expect((await intruder.get('/orgs/current')).body.org.id).toBe(a.orgId);
    const bKey = (await b.owner.post('/keys', { name: 'b' })).body;
    expectUnifiedError(await intruder.delete(`/keys/${bKey.key.id}`), 404);
    expectUnifiedError(await patch(intruder, `/orgs/current/members/${b.people[0]!.account.id}`, { role: 'admin' }), 404);
    expectUnifiedError(await put(intruder, '/orgs/current/budgets', { memberId: b.people[0]!.account.id, monthlyMicros: 1 }), 404);
    expect((await t.store.listBudgets(b.orgId))).toEqual([]);
    expect((await intruder.get('/keys')).body.keys.map((k: { id: string }) => k.id)).not.toContain(bKey.key.id);
  });

  it('a removed member stops acting for the organisation at once, and their keys stop when the admin chooses', async () => {
    const { orgId, owner, people } = await team(['member', 'member']);
    const [kept, revoked] = people as [DashboardClient, DashboardClient];
    await t.app.commands.credits.grant({ accountId: orgId, amountMicros: 50_000_000, reason: 'test' });
    const keptKey = (await kept.post('/keys', { name: 'kept' })).body;
    const revokedKey = (await revoked.post('/keys', { name: 'revoked' })).body;
    expect((await owner.delete(`/orgs/current/members/${kept.account.id}`)).status).toBe(204);
    expect((await owner.delete(`/orgs/current/members/${revoked.account.id}?revokeKeys=true`)).status).toBe(204);
    for (const gone of [kept, revoked]) {
      expect((await gone.get('/orgs')).body).toEqual({ current: null, orgs: [] });
      expect((await gone.get('/keys')).body.keys).toEqual([]);
    }
    const ask = (secret: string) => t.client(secret).chat.completions.create({ model: 'priced-echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    await expect(ask(keptKey.secret)).resolves.toMatchObject({ object: 'chat.completion' });
    await expect(ask(revokedKey.secret)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('an organisation that requires single sign-on is acted for only from a session signed in with OpenID Connect', async () => {
    const { orgId, owner } = await team([]);
    await t.app.commands.orgs.requireSso(orgId, true);
    // The owner's password session falls back to their own account, and cannot switch back.
    expect((await owner.get('/orgs')).body.current).toBeNull();
    expectUnifiedError(await owner.post('/orgs/switch', { orgId }), 403, 'This organisation requires single sign-on: sign in with SSO to act for it.');
    const { token, session } = await new Sessions(t.store).start(owner.account.id, 'oidc');
    const viaSso = new DashboardClient(t);
    viaSso.cookie = `lmgate_session=${token}`;
    viaSso.csrfToken = session.csrfToken;
    expect((await viaSso.post('/orgs/switch', { orgId })).status).toBe(204);
    expect((await viaSso.get('/orgs/current')).body.org).toMatchObject({ id: orgId, role: 'owner' });
    await t.app.commands.orgs.requireSso(orgId, false);
    expect((await owner.post('/orgs/switch', { orgId })).status).toBe(204);
  });

  it('an organisation’s key reports the organisation’s balance and plan at /api/billing/subscription', async () => {
    const { orgId, owner } = await team([]);
    await t.app.commands.credits.grant({ accountId: orgId, amountMicros: 7_000_000, reason: 'test' });
    const { secret } = (await owner.post('/keys', { name: 'k' })).body;
    const res = await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ account_id: orgId, tier: { name: 'metered' }, balance: { micros: 7_000_000 } });
  });
});
