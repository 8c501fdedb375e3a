// Organisations in the dashboard: the ones a person belongs to and switching between them
// (a session acts for one at a time, or for the person's own account), making one, and for
// the one acted for: its members (added, given roles, removed with or without their keys)
// and its monthly budgets, each shown with what it spent this month. Every change checks
// the caller's role (auth/org-roles.ts).
import { Type, type Static } from '@sinclair/typebox';
import { assertMay, mayDo, ORG_PERMISSIONS, permissionsOf } from '../../auth/org-roles.js';
import { budgetSpendLimit } from '../../billing/spend-limit.js';
import { NotFoundInStoreError, Refusal } from '../../errors.js';
import { Nullable, type JsonOf, type TypeBoxFastify } from '../../http/typebox.js';
import { ORG_ROLES, type OrgRole } from '../../store/org-store.js';
import type { Account } from '../../store/store.js';
import { MESSAGES, TRIM } from '../../validation/input-validator.js';
import type * as Json from '../api-types.js';
import { requirePermission, signedIn, type DashboardServices, type SignedIn } from '../context.js';

const Role = Type.Union(ORG_ROLES.map((role) => Type.Literal(role)));
const Permission = Type.Union(ORG_PERMISSIONS.map((permission) => Type.Literal(permission)));
const OrgRef = Type.Object({ id: Type.String(), name: Type.String(), role: Role, permissions: Type.Array(Permission) });
const Orgs = Type.Object({ current: Type.Union([OrgRef, Type.Null()]), orgs: Type.Array(OrgRef) });
export type Orgs = JsonOf<typeof Orgs, Json.Orgs>;
const Member = Type.Object({ accountId: Type.String(), email: Type.String(), name: Nullable(Type.String()), role: Role, joinedAt: Type.String() });
const Budget = Type.Object({ memberId: Nullable(Type.String()), monthlyMicros: Type.Integer(), spentMicros: Type.Integer() });
const OrgDetail = Type.Object({ org: OrgRef, members: Type.Array(Member), budgets: Type.Array(Budget) });
export type OrgDetail = JsonOf<typeof OrgDetail, Json.OrgDetail>;

const CreateBody = Type.Object({ name: Type.String({ [TRIM]: true, minLength: 1, maxLength: 200, [MESSAGES]: { minLength: 'Give the organisation a name.' } }) });
const SwitchBody = Type.Object({ orgId: Nullable(Type.String({ maxLength: 100 })) });
const AddBody = Type.Object({ email: Type.String({ [TRIM]: true, minLength: 3, maxLength: 320 }), role: Role });
const RoleBody = Type.Object({ role: Role });
const MemberParams = Type.Object({ accountId: Type.String({ maxLength: 100 }) });
const RemoveQuery = Type.Object({ revokeKeys: Type.Boolean({ default: false }) });
const BudgetBody = Type.Object({ memberId: Nullable(Type.String({ maxLength: 100 })), monthlyMicros: Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })) });

export function orgRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, commands, admission, config, sessions } = services;

  /** The organisation the session acts for; 404 when it acts for the person's own account. */
  const currentOrg = (caller: SignedIn): Account => {
    if (caller.account.kind !== 'org') throw new NotFoundInStoreError('organisation', 'current');
    return caller.account;
  };
  const detail = async (caller: SignedIn): Promise<OrgDetail> => {
    const org = currentOrg(caller);
    const [members, budgets] = await Promise.all([store.listMembers(org.id), store.listBudgets(org.id)]);
    const seesAll = mayDo(caller.role, 'budgets') || mayDo(caller.role, 'usage');
    const shown = budgets.filter((budget) => seesAll || budget.memberId === null || budget.memberId === caller.person.id);
    return {
      org: orgRef(org, caller.role),
      members: members.map(({ accountId, email, name, role, joinedAt }) => ({ accountId, email, name, role, joinedAt })),
      budgets: await Promise.all(shown.map(async (budget) => ({ ...budget, spentMicros: await admission.spent(budgetSpendLimit(org.id, budget)) }))),
    };
  };
  /** Giving or taking the owner role is the owners' alone. */
  const assertMayGive = (caller: SignedIn, from: OrgRole | undefined, to: OrgRole | undefined): void => {
    if (from === 'owner' || to === 'owner') assertMay(caller.role, 'owners');
  };

  dashboard.get('/orgs', { schema: { response: { 200: Orgs } } }, async (request) => {
    const caller = signedIn(request);
    const memberships = await store.listMemberships(caller.person.id);
    const orgs = memberships.map(({ org, role }) => orgRef(org, role));
    return { current: caller.account.kind === 'org' ? (orgs.find((org) => org.id === caller.account.id) ?? null) : null, orgs };
  });

  dashboard.post('/orgs', { schema: { body: CreateBody, response: { 201: OrgDetail } } }, async (request, reply) => {
    const caller = signedIn(request);
    const org = await commands.orgs.create(request.body.name, caller.person, config.default_tier);
    // The new organisation is where its maker goes next.
    await sessions.actFor(caller.session, org.id);
    return reply.code(201).send(await detail({ ...caller, account: org, role: 'owner' }));
  });

  dashboard.post('/orgs/switch', { schema: { body: SwitchBody } }, async (request, reply) => {
    const caller = signedIn(request);
    const { orgId } = request.body;
    if (orgId !== null) {
      const membership = await store.findMembership(orgId, caller.person.id);
      if (!membership) throw new NotFoundInStoreError('organisation', orgId);
      if (membership.org.requireSso && caller.session.authMethod !== 'oidc') throw new Refusal('org_requires_sso');
    }
    await sessions.actFor(caller.session, orgId);
    return reply.code(204).send();
  });

  dashboard.get('/orgs/current', { schema: { response: { 200: OrgDetail } } }, async (request) => detail(signedIn(request)));

  dashboard.post('/orgs/current/members', { schema: { body: AddBody, response: { 200: OrgDetail } } }, async (request) => {
    const caller = requirePermission(request, 'members');
    const org = currentOrg(caller);
    const person = request.body.email.includes('@') ? await store.findAccount(request.body.email) : undefined;
    if (!person || person.kind === 'org') throw new NotFoundInStoreError('account', request.body.email);
    assertMayGive(caller, (await store.findMembership(org.id, person.id))?.role, request.body.role);
    await commands.orgs.setMember(org.id, person, request.body.role);
    return detail(caller);
  });

  dashboard.patch('/orgs/current/members/:accountId', { schema: { params: MemberParams, body: RoleBody, response: { 200: OrgDetail } } }, async (request) => {
    const caller = requirePermission(request, 'members');
    const org = currentOrg(caller);
    const membership = await store.findMembership(org.id, request.params.accountId);
    const person = membership && (await store.findAccount(request.params.accountId));
    if (!membership || !person) throw new NotFoundInStoreError('member', request.params.accountId);
    assertMayGive(caller, membership.role, request.body.role);
    await commands.orgs.setMember(org.id, person, request.body.role);
    return detail(caller);
  });

  dashboard.delete('/orgs/current/members/:accountId', { schema: { params: MemberParams, querystring: RemoveQuery } }, async (request, reply) => {
    const caller = signedIn(request);
    const org = currentOrg(caller);
    const leaving = request.params.accountId === caller.person.id;
    // Anyone may leave; removing someone else takes the members permission (an owner, the owners').
    if (!leaving) requirePermission(request, 'members');
    const membership = await store.findMembership(org.id, request.params.accountId);
    const person = membership && (await store.findAccount(request.params.accountId));
    if (!membership || !person) throw new NotFoundInStoreError('member', request.params.accountId);
    if (!leaving) assertMayGive(caller, membership.role, undefined);
    const revokeKeys = request.query.revokeKeys && (leaving || mayDo(caller.role, 'keys'));
    await commands.orgs.removeMember(org.id, person, revokeKeys);
    return reply.code(204).send();
  });

  dashboard.put('/orgs/current/budgets', { schema: { body: BudgetBody, response: { 200: OrgDetail } } }, async (request) => {
    const caller = requirePermission(request, 'budgets');
    const org = currentOrg(caller);
    const { memberId, monthlyMicros } = request.body;
    if (memberId !== null && !(await store.findMembership(org.id, memberId))) throw new NotFoundInStoreError('member', memberId);
    await commands.orgs.setBudget(org.id, memberId, monthlyMicros);
    return detail(caller);
  });
}

function orgRef(org: Account, role: OrgRole): Static<typeof OrgRef> {
  return { id: org.id, name: org.name ?? '', role, permissions: [...permissionsOf(role)] };
}
