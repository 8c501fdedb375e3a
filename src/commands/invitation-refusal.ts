// Why an invitation to an organisation cannot be used: unknown, answered, expired, or meant
// for another address. Its own class (the error table renders it beside errors.ts's family)
// so that the invitations' words live next to the commands that refuse.
import { LmgateError } from '../lmgate-error.js';

/**
 * `invitation_not_found`: no such link or id; `invitation_expired`, `invitation_accepted`,
 * `invitation_declined`, `invitation_revoked`: it was, and is no more; `invitation_email_mismatch`:
 * the signed-in person is not the address invited; `invitation_already_member`: that address
 * belongs to the organisation already.
 */
export type InvitationRefusalCode =
  | 'invitation_not_found'
  | 'invitation_expired'
  | 'invitation_accepted'
  | 'invitation_declined'
  | 'invitation_revoked'
  | 'invitation_email_mismatch'
  | 'invitation_already_member';

export class InvitationRefusal extends LmgateError {
  constructor(readonly code: InvitationRefusalCode) {
    super(code.replaceAll('_', ' '));
  }
}
