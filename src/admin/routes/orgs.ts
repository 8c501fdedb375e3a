// Organisations: made with their first owner, listed, shown with members and budgets;
// members added, given roles or removed (their keys kept or revoked), budgets set. An
// organisation is an account: its credits, keys, usage and request log are the accounts
// routes' with its id.
import { Type } from '@sinclair/typebox';
import { Refusal } from '../../errors.js';
import { Nullable, type JsonOf, type TypeBoxFastify } from '../../http/typebox.js';
import { ORG_ROLES, type OrgBudget, type OrgMember } from '../../store/org-store.js';
import type { Account } from '../../store/store.js';
import { NotFoundInStoreError } from '../../errors.js';
import { TRIM } from '../../validation/input-validator.js';
import type * as Json from '../api-types.js';
import { callerOf, type AdminServices } from '../context.js';
import { IdParams, MAX_MICROS, requireAccount } from '../schemas.js';

const Role = Type.Union(ORG_ROLES.map((role) => Type.Literal(role)));
const AdminOrg = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tier: Type.String(),
  status: Type.String(),
  require_sso: Type.Boolean({ description: 'members act for it only when signed in with OpenID Connect' }),
  balance_micros: Type.Integer(),
  members: Type.Integer(),
  created_at: Type.String(),
});
export type AdminOrg = JsonOf<typeof AdminOrg, Json.AdminOrg>;
const AdminOrgMember = Type.Object({ account_id: Type.String(), email: Type.String(), name: Nullable(Type.String()), role: Role, joined_at: Type.String() });
export type AdminOrgMember = JsonOf<typeof AdminOrgMember, Json.AdminOrgMember>;
const AdminOrgBudget = Type.Object({ member_id: Nullable(Type.String({ description: 'null: the whole organisation' })), monthly_micros: Type.Integer() });
export type AdminOrgBudget = JsonOf<typeof AdminOrgBudget, Json.AdminOrgBudget>;
const OrgList = Type.Object({ orgs: Type.Array(AdminOrg) });
export type OrgList = JsonOf<typeof OrgList, Json.OrgList>;
const OrgDetail = Type.Object({ org: AdminOrg, members: Type.Array(AdminOrgMember), budgets: Type.Array(AdminOrgBudget) });
export type OrgDetail = JsonOf<typeof OrgDetail, Json.OrgDetail>;

const CreateBody = Type.Object({
  name: Type.String({ [TRIM]: true, minLength: 1, maxLength: 200 }),
  owner: Type.String({ minLength: 1, maxLength: 320, description: 'the first owner: an account id or email' }),
  tier: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
const MemberBody = Type.Object({ account: Type.String({ minLength: 1, maxLength: 320, description: 'account id or email' }), role: Role });
const MemberParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }), account: Type.String({ minLength: 1, maxLength: 320 }) });
const RemoveQuery = Type.Object({ revoke_keys: Type.Boolean({ default: false, description: 'revoke the keys the member made (else they stay the organisation’s)' }) });
const Removed = Type.Object({ revoked_key_ids: Type.Array(Type.String()) });
export type Removed = JsonOf<typeof Removed, Json.MemberRemoved>;
const BudgetBody = Type.Object({
  member: Nullable(Type.String({ minLength: 1, maxLength: 320, description: 'a member’s account id or email; null: the whole organisation' })),
  monthly_micros: Nullable(Type.Integer({ minimum: 1, maximum: MAX_MICROS, description: 'credits per calendar month (UTC) in micro-credits; null removes the budget' })),
});

const SsoBody = Type.Object({ require_sso: Type.Boolean() });

const tags = ['organisations'];

export function orgRoutes(admin: TypeBoxFastify, services: AdminServices): void {
  const { store, commands, balances, config } = services;

  const requireOrg = async (ref: string): Promise<Account> => {
    const org = await store.findOrg(ref);
    if (!org) throw new NotFoundInStoreError('organisation', ref);
    return org;
  };
  const detail = async (org: Account): Promise<OrgDetail> => {
    const [members, budgets, { balanceMicros }] = await Promise.all([store.listMembers(org.id), store.listBudgets(org.id), balances.of(org.id)]);
    return { org: orgView(org, balanceMicros, members.length), members: members.map(memberView), budgets: budgets.map(budgetView) };
  };

  admin.get('/orgs', { config: { adminScope: 'read' }, schema: { tags, summary: 'List organisations', response: { 200: OrgList } } }, async () => {
    const orgs = await store.listOrgs();
    return { orgs: orgs.map((org) => orgView(org, org.balanceMicros, org.members)) };
  });

  admin.post('/orgs', { config: { adminScope: 'accounts' }, schema: { tags, summary: 'Create an organisation', body: CreateBody, response: { 201: OrgDetail } } }, async (request, reply) => {
    const owner = await requireAccount(store, request.body.owner);
    if (owner.kind === 'org') throw new NotFoundInStoreError('person', request.body.owner);
    const tier = request.body.tier ?? config.default_tier;
    if (!(tier in config.tiers)) throw new NotFoundInStoreError('tier', tier);
    const org = await commands.orgs.create(request.body.name, owner, tier, callerOf(request).actor);
    return reply.code(201).send(await detail(org));
  });

  admin.get('/orgs/:id', { config: { adminScope: 'read' }, schema: { tags, summary: 'An organisation, its members and budgets', params: IdParams, response: { 200: OrgDetail } } }, async (request) =>
    detail(await requireOrg(request.params.id)),
  );

  admin.patch('/orgs/:id', { config: { adminScope: 'accounts' }, schema: { tags, summary: 'Require single sign-on for the members', params: IdParams, body: SsoBody, response: { 200: OrgDetail } } }, async (request) => {
    const org = await requireOrg(request.params.id);
    return detail(await commands.orgs.requireSso(org.id, request.body.require_sso, callerOf(request).actor));
  });

  admin.post('/orgs/:id/members', { config: { adminScope: 'accounts' }, schema: { tags, summary: 'Add a member, or change their role', params: IdParams, body: MemberBody, response: { 200: OrgDetail } } }, async (request) => {
    const org = await requireOrg(request.params.id);
    const person = await requireAccount(store, request.body.account);
    if (person.kind === 'org') throw new NotFoundInStoreError('person', request.body.account);
    await commands.orgs.setMember(org.id, person, request.body.role, callerOf(request).actor);
    return detail(org);
  });

  admin.delete(
    '/orgs/:id/members/:account',
    { config: { adminScope: 'accounts' }, schema: { tags, summary: 'Remove a member', params: MemberParams, querystring: RemoveQuery, response: { 200: Removed } } },
    async (request) => {
      const org = await requireOrg(request.params.id);
      const person = await requireAccount(store, request.params.account);
      const { removed, revokedKeyIds } = await commands.orgs.removeMember(org.id, person, request.query.revoke_keys, callerOf(request).actor);
      if (!removed) throw new NotFoundInStoreError('member', request.params.account);
      return { revoked_key_ids: revokedKeyIds };
    },
  );

  admin.put('/orgs/:id/budgets', { config: { adminScope: 'accounts' }, schema: { tags, summary: 'Set or remove a monthly budget', params: IdParams, body: BudgetBody, response: { 200: OrgDetail } } }, async (request) => {
    const org = await requireOrg(request.params.id);
    let memberId: string | null = null;
    if (request.body.member !== null) {
      const person = await requireAccount(store, request.body.member);
      if (!(await store.findMembership(org.id, person.id))) throw new Refusal('org_role_required');
      memberId = person.id;
    }
    await commands.orgs.setBudget(org.id, memberId, request.body.monthly_micros, callerOf(request).actor);
    return detail(org);
  });
}

function orgView(org: Account, balanceMicros: number, members: number): AdminOrg {
  return { id: org.id, name: org.name ?? '', tier: org.tier, status: org.status, require_sso: org.requireSso, balance_micros: balanceMicros, members, created_at: org.createdAt };
}

function memberView(member: OrgMember): AdminOrgMember {
  return { account_id: member.accountId, email: member.email, name: member.name, role: member.role, joined_at: member.joinedAt };
}

function budgetView(budget: OrgBudget): AdminOrgBudget {
  return { member_id: budget.memberId, monthly_micros: budget.monthlyMicros };
}
