// Setting a new password from a one-time link (`lmgate accounts reset-link`, or "Forgot
// password" when mail is configured). Neither answer says whether an email has an account.
import { Type } from '@sinclair/typebox';
import { Refusal } from '../../errors.js';
import type { TypeBoxFastify } from '../../http/typebox.js';
import type { Mailer } from '../../mail/mailer.js';
import type { DashboardServices } from '../context.js';
import { MESSAGES, TRIM } from '../../validation/input-validator.js';
import { configuredOrigin, linkTo, RESET_LINK_TTL_MS, RESET_PAGE_PATH } from '../../auth/account-links.js';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../auth/passwords.js';

const ResetBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200 }),
  newPassword: Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH }),
});
const ForgotBody = Type.Object({
  email: Type.String({ [TRIM]: true, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$', [MESSAGES]: { pattern: 'Enter a valid email address.' } }),
});

export function passwordResetRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, commands, mailer, config } = services;
  const { signInPerAddress, resetMailPerAccount, resetMailPerAddress } = services.throttles;

  dashboard.post('/password-reset', { config: { public: true }, schema: { body: ResetBody } }, async (request, reply) => {
    await signInPerAddress.assertAllowed(request.ip);
    const accountId = await commands.accounts.resetPassword(request.body.token, await hashPassword(request.body.newPassword));
    if (accountId === undefined) {
      await signInPerAddress.recordFailure(request.ip);
      throw new Refusal('reset_link_invalid');
    }
    return reply.code(204).send();
  });

  if (mailer === undefined) return;
  // The link's address comes from the config (server.public_url), never from the request's
  // Host header, which whoever asks for the mail chooses.
  const origin = configuredOrigin(config);

  // Always 204, whether or not the email has an account, and the mail goes out after the
  // answer, so neither the answer nor its timing tells.
  dashboard.post('/forgot-password', { config: { public: true }, schema: { body: ForgotBody } }, async (request, reply) => {
    const email = request.body.email.toLowerCase();
    await resetMailPerAddress.assertAllowed(request.ip);
    await resetMailPerAccount.assertAllowed(email);
    await Promise.all([resetMailPerAddress.recordFailure(request.ip), resetMailPerAccount.recordFailure(email)]);
    void mailResetLink(mailer, email).catch((err: unknown) => request.log.error({ err }, 'password reset mail failed'));
    return reply.code(204).send();
  });

  async function mailResetLink(to: Mailer, email: string): Promise<void> {
    const account = await store.findAccount(email);
    if (account === undefined) return;
    const { token } = await commands.accounts.issuePasswordReset(account.id);
    await to.send({
      to: account.email,
      subject: 'Reset your lmgate password',
      text:
        `Someone asked to reset the password of your account at ${origin}.\n\n` +
        `To choose a new password, open this link within ${RESET_LINK_TTL_MS / 60_000} minutes:\n\n` +
        `${linkTo(origin, RESET_PAGE_PATH, token)}\n\n` +
        'If it was not you, ignore this mail: your password stays as it is.\n',
    });
  }
}
