// Public configuration, sign-up, sign-in, the session, sign-out and password change.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { creditsToMicros } from '../../billing/money.js';
import type { Account } from '../../store/store.js';
import { parseInput } from '../body.js';
import { Refusal } from '../../errors.js';
import { hashPassword, verifyAgainstDecoy, verifyPassword } from '../passwords.js';
import { signedIn, type DashboardServices } from '../context.js';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../sessions.js';
import { accountView, baseUrls } from '../views.js';

const email = z
  .string()
  .trim()
  .max(320)
  .regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, 'Enter a valid email address.');
const newPassword = z.string().min(10, 'Use at least 10 characters.').max(200, 'Use at most 200 characters.');

const signUpBody = z.object({
  email,
  password: newPassword,
  name: z.string().trim().max(200).nullish(),
});
const signInBody = z.object({ email: z.string().trim().max(320), password: z.string().max(200) });
const passwordBody = z.object({ currentPassword: z.string().max(200), newPassword });

export function signInRoutes(dashboard: FastifyInstance, services: DashboardServices): void {
  const { config, store, sessions, commands } = services;
  const { signInPerAccount, signInPerAddress, signUpPerAddress } = services.throttles;

  dashboard.get('/config', { config: { public: true } }, async (request) => ({
    signupOpen: config.signup.open,
    baseUrls: baseUrls(request, config),
  }));

  dashboard.post('/signup', { config: { public: true } }, async (request, reply) => {
    if (!config.signup.open) throw new Refusal('sign_up_closed');
    signUpPerAddress.assertAllowed(request.ip);
    signUpPerAddress.recordFailure(request.ip);
    const input = parseInput(signUpBody, request.body);
    if (await store.findAccount(input.email)) throw new Refusal('email_taken');
    const account = await commands.signUp({
      email: input.email,
      name: input.name || null,
      tier: config.default_tier,
      passwordHash: await hashPassword(input.password),
      creditsMicros: creditsToMicros(config.signup.credits),
    });
    return reply.code(201).send(await startSession(request, reply, account));
  });

  dashboard.post('/signin', { config: { public: true } }, async (request, reply) => {
    const input = parseInput(signInBody, request.body);
    const accountKey = input.email.toLowerCase();
    signInPerAddress.assertAllowed(request.ip);
    signInPerAccount.assertAllowed(accountKey);
    // findAccount reads a reference without `@` as an account id: never let that through.
    const account = input.email.includes('@') ? await store.findAccount(input.email) : undefined;
    const passwordHash = account && (await store.findPasswordHash(account.id));
    const valid = passwordHash ? await verifyPassword(input.password, passwordHash) : await verifyAgainstDecoy(input.password);
    if (!account || !valid) {
      signInPerAddress.recordFailure(request.ip);
      signInPerAccount.recordFailure(accountKey);
      throw new Refusal('wrong_credentials');
    }
    signInPerAccount.forget(accountKey);
    return startSession(request, reply, account);
  });

  dashboard.get('/session', async (request) => {
    const { account, session } = signedIn(request);
    return { account: accountView(account), csrfToken: session.csrfToken };
  });

  dashboard.post('/signout', async (request, reply) => {
    await sessions.end(signedIn(request).session);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.code(204).send();
  });

  dashboard.post('/password', async (request, reply) => {
    const { account, session } = signedIn(request);
    const input = parseInput(passwordBody, request.body);
    // Guessing the current password from a borrowed session counts against the same
    // allowance as guessing it at sign-in.
    signInPerAccount.assertAllowed(account.email);
    const passwordHash = await store.findPasswordHash(account.id);
    const valid = passwordHash ? await verifyPassword(input.currentPassword, passwordHash) : await verifyAgainstDecoy(input.currentPassword);
    if (!valid) {
      signInPerAccount.recordFailure(account.email);
      throw new Refusal('wrong_current_password');
    }
    await commands.setPassword(account.id, await hashPassword(input.newPassword));
    await sessions.endOthers(session);
    return reply.code(204).send();
  });

  async function startSession(request: FastifyRequest, reply: FastifyReply, account: Account): Promise<Record<string, unknown>> {
    // A browser holds one session: the one its cookie named ends with this sign-in.
    const previous = await sessions.find(request.cookies[SESSION_COOKIE]);
    if (previous) await sessions.end(previous);
    const { token, session } = await sessions.start(account.id);
    reply.setCookie(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      // https when lmgate serves TLS, or when a trusted proxy says the client used it.
      secure: request.protocol === 'https',
      maxAge: SESSION_TTL_MS / 1000,
    });
    return { account: accountView(account), csrfToken: session.csrfToken };
  }
}
