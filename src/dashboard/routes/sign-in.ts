// Public configuration, sign-up, sign-in, the session, sign-out and password change.
import { supportContact } from '../../config/support-contact.js';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { creditsToMicros } from '../../money.js';
import { EmailTakenError, Refusal } from '../../errors.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, verifyAgainstDecoy, verifyPassword } from '../../auth/passwords.js';
import { signedIn, type DashboardServices } from '../context.js';
import { MESSAGES, TRIM } from '../../validation/input-validator.js';
import { SESSION_COOKIE } from '../../web-session/sessions.js';
import { startSession } from '../start-session.js';
import { SessionView, accountView, baseUrls } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';
import type * as Json from '../api-types.js';
import { CONFIRM_LINK_TTL_MS, CONFIRM_PAGE_PATH, FORGOT_PAGE_PATH, SIGN_IN_PAGE_PATH, configuredOrigin, linkTo, pageUrl } from '../../auth/account-links.js';
import type { Mailer } from '../../mail/mailer.js';

const Email = Type.String({
  [TRIM]: true,
  maxLength: 320,
  pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
  [MESSAGES]: { pattern: 'Enter a valid email address.' },
});
const NewPassword = Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH });

const SignUpBody = Type.Object({
  email: Email,
  password: NewPassword,
  name: Type.Optional(Nullable(Type.String({ [TRIM]: true, maxLength: 200 }))),
});
const SignInBody = Type.Object({ email: Type.String({ [TRIM]: true, maxLength: 320 }), password: Type.String({ maxLength: 200 }) });
const PasswordBody = Type.Object({ currentPassword: Type.String({ maxLength: 200 }), newPassword: NewPassword });
const ConfirmationSent = Type.Object({ emailToConfirm: Type.String() });
export type ConfirmationSent = JsonOf<typeof ConfirmationSent, Json.ConfirmationSent>;
const ConfirmBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
const DashboardConfig = Type.Object({
  signupOpen: Type.Boolean(),
  passwordResetByMail: Type.Boolean(),
  verifyEmail: Type.Boolean(),
  support: Type.Object({ email: Nullable(Type.String()), url: Nullable(Type.String()) }),
  baseUrls: Type.Array(Type.String()),
  sso: Type.Union([Type.Object({ label: Type.String() }), Type.Null()]),
});
export type DashboardConfig = JsonOf<typeof DashboardConfig, Json.DashboardConfig>;

export function signInRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { config, store, sessions, commands } = services;
  const { signInPerAccount, signInPerAddress, signUpPerAddress } = services.throttles;

  dashboard.get('/config', { config: { public: true }, schema: { response: { 200: DashboardConfig } } }, async (request) => ({
    signupOpen: config.signup.open,
    passwordResetByMail: services.mailer !== undefined,
    verifyEmail: config.signup.verify_email,
    support: supportContact(config),
    baseUrls: baseUrls(request, config),
    sso: config.auth.oidc ? { label: config.auth.oidc.button_label } : null,
  }));

  // Before the body is checked: a closed sign-up says so whatever was sent, and every
  // attempt counts against the address's allowance.
  const admitSignUp = async (request: FastifyRequest): Promise<void> => {
    if (!config.signup.open) throw new Refusal('sign_up_closed');
    await signUpPerAddress.assertAllowed(request.ip);
    await signUpPerAddress.recordFailure(request.ip);
  };

  const signUpSchema = { body: SignUpBody, response: { 201: SessionView, 202: ConfirmationSent } };
  dashboard.post('/signup', { config: { public: true }, schema: signUpSchema, preValidation: admitSignUp }, async (request, reply) => {
    const input = request.body;
    const taken = (await store.findAccount(input.email)) !== undefined;
    const signUp = { email: input.email, name: input.name || null, passwordHash: await hashPassword(input.password) };
    if (config.signup.verify_email && services.mailer) {
      // The same answer whether or not the address has an account, so that sign-up tells
      // nobody which addresses do: its owner is told by mail instead.
      const origin = configuredOrigin(config);
      if (taken) await mailTakenAddress(services.mailer, origin, input.email);
      else await mailConfirmation(services.mailer, origin, input.email, await commands.accounts.requestSignUp(signUp));
      return reply.code(202).send({ emailToConfirm: input.email });
    }
    // Signed in at once: a taken address must be refused, and so is told apart (README).
    if (taken) throw new EmailTakenError(input.email);
    const account = await commands.accounts.signUp({ ...signUp, tier: config.default_tier, creditsMicros: creditsToMicros(config.signup.credits) });
    return reply.code(201).send(await startSession(sessions, request, reply, account));
  });

  // The link mailed at sign-up: the account is created now, and signed in.
  dashboard.post('/confirm-email', { config: { public: true }, schema: { body: ConfirmBody, response: { 200: SessionView } } }, async (request, reply) => {
    await signInPerAddress.assertAllowed(request.ip);
    const account = await commands.accounts.confirmSignUp(request.body.token, { tier: config.default_tier, creditsMicros: creditsToMicros(config.signup.credits) });
    if (account === undefined) {
      await signInPerAddress.recordFailure(request.ip);
      throw new Refusal('reset_link_invalid');
    }
    return startSession(sessions, request, reply, account);
  });

  dashboard.post('/signin', { config: { public: true }, schema: { body: SignInBody, response: { 200: SessionView } } }, async (request, reply) => {
    const input = request.body;
    const accountKey = input.email.toLowerCase();
    await signInPerAddress.assertAllowed(request.ip);
    await signInPerAccount.assertAllowed(accountKey);
    // findAccount reads a reference without `@` as an account id: never let that through.
    const account = input.email.includes('@') ? await store.findAccount(input.email) : undefined;
    const passwordHash = account && (await store.findPasswordHash(account.id));
    const valid = passwordHash ? await verifyPassword(input.password, passwordHash) : await verifyAgainstDecoy(input.password);
    if (!account || !valid) {
      await Promise.all([signInPerAddress.recordFailure(request.ip), signInPerAccount.recordFailure(accountKey)]);
      throw new Refusal('wrong_credentials');
    }
    await signInPerAccount.forget(accountKey);
    return startSession(sessions, request, reply, account);
  });

  dashboard.get('/session', { schema: { response: { 200: SessionView } } }, async (request) => {
    const { person: account, session } = signedIn(request);
    return { account: accountView(account), csrfToken: session.csrfToken };
  });

  dashboard.post('/signout', async (request, reply) => {
    await sessions.end(signedIn(request).session);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.code(204).send();
  });

  dashboard.post('/password', { schema: { body: PasswordBody } }, async (request, reply) => {
    const { person: account, session } = signedIn(request);
    const input = request.body;
    // Guessing the current password from a borrowed session counts against the same
    // allowance as guessing it at sign-in.
    await signInPerAccount.assertAllowed(account.email);
    const passwordHash = await store.findPasswordHash(account.id);
    const valid = passwordHash ? await verifyPassword(input.currentPassword, passwordHash) : await verifyAgainstDecoy(input.currentPassword);
    if (!valid) {
      await signInPerAccount.recordFailure(account.email);
      throw new Refusal('wrong_current_password');
    }
    await commands.accounts.setPassword(account.id, await hashPassword(input.newPassword));
    await sessions.endOthers(session);
    return reply.code(204).send();
  });
}

function mailTakenAddress(mailer: Mailer, origin: string, email: string): Promise<void> {
  return mailer.send({
    to: email,
    subject: 'Someone tried to sign up with your lmgate address',
    text:
      `Someone tried to create an account at ${origin} with this address, which already has one.\n\n` +
      `If it was you, sign in at ${pageUrl(origin, SIGN_IN_PAGE_PATH)}, or choose a new password at ${pageUrl(origin, FORGOT_PAGE_PATH)}.\n` +
      'If it was not you, ignore this mail: nothing changed.\n',
  });
}

function mailConfirmation(mailer: Mailer, origin: string, email: string, token: string): Promise<void> {
  return mailer.send({
    to: email,
    subject: 'Confirm your lmgate account',
    text:
      `Someone signed up at ${origin} with this address.\n\n` +
      `To confirm it and start using the account, open this link within ${CONFIRM_LINK_TTL_MS / 3_600_000} hours:\n\n` +
      `${linkTo(origin, CONFIRM_PAGE_PATH, token)}\n\n` +
      'If it was not you, ignore this mail: no account is created without it.\n',
  });
}
