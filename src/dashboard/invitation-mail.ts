// The invitation's link and its mail. The token rides in the page's path
// (`/invite/<token>`): the page reads it and sends no request elsewhere, and the store keeps
// only its hash.
import { pageUrl } from '../auth/account-links.js';
import { INVITATION_TTL_MS } from '../commands/invitations.js';
import type { Mailer } from '../mail/mailer.js';

export const INVITE_PAGE_PATH = '/invite';

export function invitationLink(origin: string, token: string): string {
  return pageUrl(origin, `${INVITE_PAGE_PATH}/${token}`);
}

export function mailInvitation(mailer: Mailer, input: { to: string; orgName: string; role: string; invitedBy: string; link: string }): Promise<void> {
  return mailer.send({
    to: input.to,
    subject: `You are invited to join ${input.orgName} on lmgate`,
    text:
      `${input.invitedBy} invited you to join the organisation ${input.orgName} as ${input.role}.\n\n` +
      `To accept (or decline), open this link within ${INVITATION_TTL_MS / 86_400_000} days:\n\n` +
      `${input.link}\n\n` +
      'If you do not know them, ignore this mail: nothing happens without it.\n',
  });
}
