// Invitations to an organisation in the dashboard. For the one acted for, by whoever may
// manage its members: invite an address with a role (mailed when SMTP is configured, else
// the link is handed back to pass on), the open invitations, withdrawing one. Through the
// link, for anyone holding it: what it offers, declining it, and accepting it signed in as
// the invited address or by signing up with it (the link proved the address); either way
// the session then acts for the organisation.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../auth/passwords.js';
import { configuredOrigin, hashAccountToken as hashToken } from '../../auth/account-links.js';
import { InvitationRefusal } from '../../commands/invitation-refusal.js';
import { assertOpen } from '../../commands/invitations.js';
import { NotFoundInStoreError, Refusal } from '../../errors.js';
import { Nullable, type JsonOf, type TypeBoxFastify } from '../../http/typebox.js';
import { creditsToMicros } from '../../money.js';
import type { Invitation } from '../../store/invitation-store.js';
import { ORG_ROLES } from '../../store/org-store.js';
import { MESSAGES, TRIM } from '../../validation/input-validator.js';
import { requirePermission, signedIn, type DashboardServices } from '../context.js';
import type * as Json from '../invitation-api-types.js';
import { invitationLink, mailInvitation } from '../invitation-mail.js';
import { startSession } from '../start-session.js';
import { SessionView } from '../views.js';

const Role = Type.Union(ORG_ROLES.map((role) => Type.Literal(role)));
const InvitationView = Type.Object({ id: Type.String(), email: Type.String(), role: Role, createdAt: Type.String(), expiresAt: Type.String() });
const InvitationSent = Type.Object({ invitation: InvitationView, mailed: Type.Boolean(), link: Nullable(Type.String()) });
export type InvitationSent = JsonOf<typeof InvitationSent, Json.InvitationSent>;
const InvitationList = Type.Object({ invitations: Type.Array(InvitationView) });
export type InvitationList = JsonOf<typeof InvitationList, Json.InvitationList>;
const InvitationPreview = Type.Object({ orgName: Type.String(), email: Type.String(), role: Role, expiresAt: Type.String(), hasAccount: Type.Boolean() });
export type InvitationPreview = JsonOf<typeof InvitationPreview, Json.InvitationPreview>;
const InvitationAccepted = Type.Object({ org: Type.Object({ id: Type.String(), name: Type.String(), role: Role }) });
export type InvitationAccepted = JsonOf<typeof InvitationAccepted, Json.InvitationAccepted>;

const InviteBody = Type.Object({
  email: Type.String({ [TRIM]: true, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', [MESSAGES]: { pattern: 'Enter a valid email address.' } }),
  role: Role,
});
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
const SignUpBody = Type.Object({
  password: Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH }),
  name: Type.Optional(Nullable(Type.String({ [TRIM]: true, maxLength: 200 }))),
});

const view = ({ id, email, role, createdAt, expiresAt }: Invitation): Json.InvitationView => ({ id, email, role, createdAt, expiresAt });

export function invitationRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, commands, config, sessions, mailer } = services;
  const { signUpPerAddress } = services.throttles;

  /** The organisation acted for, for a caller who may manage its members; 404 when the session acts for the person's own account. */
  const currentOrgFor = (request: FastifyRequest) => {
    const caller = requirePermission(request, 'members');
    if (caller.account.kind !== 'org') throw new NotFoundInStoreError('organisation', 'current');
    return caller;
  };
  /** The open invitation a link names, or its refusal (404 unknown, 410 answered or expired). */
  const openInvitation = async (token: string): Promise<Invitation> => {
    const invitation = await store.findInvitationByTokenHash(hashToken(token));
    if (!invitation) throw new InvitationRefusal('invitation_not_found');
    assertOpen(invitation, new Date().toISOString());
    return invitation;
  };

  dashboard.post('/orgs/current/invitations', { schema: { body: InviteBody, response: { 201: InvitationSent } } }, async (request, reply) => {
    const caller = currentOrgFor(request);
    const { invitation, token } = await commands.invitations.invite(caller.account, caller, request.body.email, request.body.role);
    const link = invitationLink(configuredOrigin(config), token);
    // With SMTP the link goes only to the address: whoever invited never holds it.
    if (mailer) {
      await mailInvitation(mailer, { to: invitation.email, orgName: caller.account.name ?? '', role: invitation.role, invitedBy: caller.person.name ?? caller.person.email, link });
    }
    return reply.code(201).send({ invitation: view(invitation), mailed: mailer !== undefined, link: mailer ? null : link });
  });

  dashboard.get('/orgs/current/invitations', { schema: { response: { 200: InvitationList } } }, async (request) => {
    const caller = currentOrgFor(request);
    return { invitations: (await store.listPendingInvitations(caller.account.id, new Date().toISOString())).map(view) };
  });

  dashboard.delete('/orgs/current/invitations/:id', { schema: { params: IdParams } }, async (request, reply) => {
    const caller = currentOrgFor(request);
    await commands.invitations.revoke(caller.account.id, request.params.id);
    return reply.code(204).send();
  });

  dashboard.get('/invitations/:token', { config: { public: true }, schema: { params: TokenParams, response: { 200: InvitationPreview } } }, async (request) => {
    const invitation = await openInvitation(request.params.token);
    const org = await store.findOrg(invitation.orgId);
    const hasAccount = (await store.findAccount(invitation.email)) !== undefined;
    return { orgName: org?.name ?? '', email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt, hasAccount };
  });

  dashboard.post('/invitations/:token/accept', { schema: { params: TokenParams, response: { 200: InvitationAccepted } } }, async (request) => {
    const caller = signedIn(request);
    const invitation = await commands.invitations.accept(request.params.token, caller.person);
    const membership = await store.findMembership(invitation.orgId, caller.person.id);
    if (!membership) throw new NotFoundInStoreError('organisation', invitation.orgId);
    await sessions.actFor(caller.session, invitation.orgId);
    return { org: { id: membership.org.id, name: membership.org.name ?? '', role: membership.role } };
  });

  dashboard.post('/invitations/:token/decline', { config: { public: true }, schema: { params: TokenParams } }, async (request, reply) => {
    await commands.invitations.decline(request.params.token);
    return reply.code(204).send();
  });

  // The invited address has no account: made now, joined and signed in, acting for the
  // organisation. No confirmation mail: the link came to the address. Sign-up's rules
  // otherwise hold (open, its allowance per client address, its credits).
  const admitSignUp = async (request: FastifyRequest): Promise<void> => {
    if (!config.signup.open) throw new Refusal('sign_up_closed');
    await signUpPerAddress.assertAllowed(request.ip);
    await signUpPerAddress.recordFailure(request.ip);
  };
  const signUpSchema = { params: TokenParams, body: SignUpBody, response: { 201: SessionView } };
  dashboard.post('/invitations/:token/signup', { config: { public: true }, schema: signUpSchema, preValidation: admitSignUp }, async (request, reply) => {
    await openInvitation(request.params.token);
    const { invitation, account } = await commands.invitations.acceptBySignUp(request.params.token, {
      name: request.body.name || null,
      passwordHash: await hashPassword(request.body.password),
      tier: config.default_tier,
      creditsMicros: creditsToMicros(config.signup.credits),
    });
    return reply.code(201).send(await startSession(sessions, request, reply, account, 'password', invitation.orgId));
  });
}
