// Organisations through the admin API, on SQLite and PostgreSQL: made with their first
// owner, listed and shown with members and budgets, members added, re-roled and removed
// (their keys revoked when asked), budgets set and removed, single sign-on required; every
// write needs the accounts scope and is audited; credits go to the organisation through
// the accounts routes with its id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPES } from '../../src/auth/admin-key.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { adminCall, adminKey } from './admin-client.js';

describe.each(['sqlite', 'postgres'] as const)('organisations through the admin API on %s', (database) => {
  let t: TestApp;
  let bearer: string;
  let reader: string;
  let orgs = 0;
  const call = (method: string, path: string, body?: unknown) => adminCall(t, { bearer }, method, path, body);

  beforeAll(async () => {
    t = await startApp({ database });
    bearer = await adminKey(t, [...ADMIN_SCOPES]);
    reader = await adminKey(t, ['read']);
  });
  afterAll(() => t.close());

  async function person(): Promise<string> {
    return (await t.createAccount()).account.email;
  }

  it('makes an organisation, adds and re-roles members, sets budgets, and shows it all', async () => {
    const [owner, member] = [await person(), await person()];
    const name = `Acme ${++orgs}`;
    const created = await call('POST', '/orgs', { name, owner });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const orgId = created.body.org.id as string;
    expect(created.body).toMatchObject({ org: { name, tier: t.config.default_tier, members: 1, balance_micros: 0, require_sso: false }, members: [{ email: owner, role: 'owner' }], budgets: [] });

    expect((await call('POST', `/orgs/${orgId}/members`, { account: member, role: 'billing' })).body.members).toEqual([
      expect.objectContaining({ email: owner, role: 'owner' }),
      expect.objectContaining({ email: member, role: 'billing' }),
    ]);
    const memberId = (await t.store.findAccount(member))!.id;
    const budgets = await call('PUT', `/orgs/${orgId}/budgets`, { member, monthly_micros: 3_000_000 });
    expect(budgets.body.budgets).toEqual([{ member_id: memberId, monthly_micros: 3_000_000 }]);
    expect((await call('PUT', `/orgs/${name}/budgets`, { member: null, monthly_micros: 9_000_000 })).body.budgets).toHaveLength(2);
    expect((await call('PUT', `/orgs/${orgId}/budgets`, { member: null, monthly_micros: null })).body.budgets).toHaveLength(1);

    // The organisation is an account: credits through the accounts routes.
    expect((await call('POST', `/accounts/${orgId}/credits/grant`, { amount_micros: 4_000_000, reason: 'welcome' })).status).toBe(200);
    const listed = await adminCall(t, { bearer: reader }, 'GET', '/orgs');
    expect(listed.body.orgs).toEqual(expect.arrayContaining([expect.objectContaining({ id: orgId, balance_micros: 4_000_000, members: 2 })]));
    expect((await adminCall(t, { bearer: reader }, 'GET', `/orgs/${orgId}`)).body.org).toMatchObject({ balance_micros: 4_000_000 });

    expect((await call('PATCH', `/orgs/${orgId}`, { require_sso: true })).body.org.require_sso).toBe(true);
    const audit = await t.store.listAudit({ limit: 20, targetId: orgId });
    expect(audit.map((entry) => entry.action)).toEqual(expect.arrayContaining(['org.create', 'org.set_member', 'org.set_budget', 'org.require_sso', 'credits.grant']));
  });

  it('removes a member with their keys revoked, or kept; keeps the last owner', async () => {
    const [owner, leaver] = [await person(), await person()];
    const orgId = (await call('POST', '/orgs', { name: `Acme ${++orgs}`, owner })).body.org.id as string;
    await call('POST', `/orgs/${orgId}/members`, { account: leaver, role: 'member' });
    const leaverId = (await t.store.findAccount(leaver))!.id;
    const { record } = await t.app.commands.keys.create(orgId, 'leaver key', undefined, undefined, leaverId);
    const removed = await call('DELETE', `/orgs/${orgId}/members/${leaver}?revoke_keys=true`);
    expect(removed.body).toEqual({ revoked_key_ids: [record.id] });
    expect((await t.store.findKeyById(record.id))?.revokedAt).not.toBeNull();
    expect((await call('DELETE', `/orgs/${orgId}/members/${leaver}`)).status).toBe(404);
    expect((await call('DELETE', `/orgs/${orgId}/members/${owner}`)).status).toBe(409);
  });

  it('needs the accounts scope to change an organisation, and refuses bad input in the API’s shape', async () => {
    const owner = await person();
    expect((await adminCall(t, { bearer: reader }, 'POST', '/orgs', { name: `Acme ${++orgs}`, owner })).status).toBe(403);
    expect((await call('POST', '/orgs', { name: '', owner })).status).toBe(422);
    expect((await call('POST', '/orgs', { name: 'x', owner: 'nobody@example.test' })).status).toBe(404);
    const name = `Acme ${++orgs}`;
    expect((await call('POST', '/orgs', { name, owner })).status).toBe(201);
    const taken = await call('POST', '/orgs', { name, owner });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toBe('An organisation with this name already exists.');
    expect((await call('POST', `/orgs/${name}/members`, { account: owner, role: 'boss' })).status).toBe(422);
    expect((await call('GET', '/orgs/org_missing')).status).toBe(404);
  });
});
