// Inviting people to the organisation acted for, by email with a role: the invitation is
// mailed when the server sends mail, else its link is shown to pass on. Below, the open
// invitations, each withdrawn with one click. Only for those who manage members (an owner
// alone invites an owner); for everyone else it shows nothing.
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../../api';
import { CopyButton } from '../../components/CopyButton';
import { Notice } from '../../components/Notice';
import { TextField } from '../../components/TextField';
import { formatDate } from '../../format';
import { formatRole, may } from '../../org-permissions';
import { RoleOptions } from './RoleOptions';
import { useOrgs } from '../../orgs';
import type { Invitation, InvitationList, InvitationSent, OrgRole } from '../../types';
import { useApiData } from '../../use-api-data';

export function Invitations() {
  const { current } = useOrgs();
  const manages = current !== null && may(current, 'members');
  const list = useApiData<InvitationList>(manages ? '/orgs/current/invitations' : null);
  const [error, setError] = useState<string | undefined>(undefined);

  if (!manages || current === null) return null;

  async function revoke(invitation: Invitation) {
    setError(undefined);
    try {
      await api(`/orgs/current/invitations/${encodeURIComponent(invitation.id)}`, { method: 'DELETE' });
      list.setData((data) => data && { invitations: data.invitations.filter((one) => one.id !== invitation.id) });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }

  const pending = list.data?.invitations ?? [];
  return (
    <section className="card flush" aria-labelledby="invitations-title">
      <div className="card-head">
        <h2 id="invitations-title" className="card-title">
          Invitations
        </h2>
        <p className="muted">Invite someone by email: they join with the role you choose once they accept, signing up first if they have no account.</p>
      </div>
      <InviteForm mayGiveOwner={may(current, 'owners')} onSent={(sent) => list.setData((data) => ({ invitations: [sent.invitation, ...(data?.invitations ?? []).filter((one) => one.email !== sent.invitation.email)] }))} />
      {error === undefined ? null : (
        <div className="padded">
          <Notice tone="error">{error}</Notice>
        </div>
      )}
      {list.error === undefined ? null : (
        <div className="padded">
          <Notice tone="error">{list.error.message}</Notice>
        </div>
      )}
      {pending.length === 0 ? (
        <p className="muted padded">No open invitations.</p>
      ) : (
        <table className="table stacked" data-testid="org-invitations">
          <caption className="visually-hidden">Open invitations</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Expires</th>
              <th scope="col" className="actions">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {pending.map((invitation) => (
              <tr key={invitation.id}>
                <th scope="row" data-label="Email">
                  {invitation.email}
                </th>
                <td data-label="Role">
                  <span className="badge neutral">{formatRole(invitation.role)}</span>
                </td>
                <td data-label="Expires">{formatDate(invitation.expiresAt)}</td>
                <td className="actions">
                  <button type="button" className="button small danger-outline" aria-label={`Revoke the invitation of ${invitation.email}`} onClick={() => void revoke(invitation)}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function InviteForm({ mayGiveOwner, onSent }: { mayGiveOwner: boolean; onSent(sent: InvitationSent): void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<OrgRole>('member');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [sent, setSent] = useState<InvitationSent | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setSent(undefined);
    try {
      const answer = await api<InvitationSent>('/orgs/current/invitations', { method: 'POST', body: { email: email.trim(), role } });
      setSent(answer);
      setEmail('');
      onSent(answer);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="form padded member-add" aria-label="Invite someone" onSubmit={(event) => void submit(event)}>
      <div className="member-add-fields">
        <TextField label="Email" type="email" value={email} required autoComplete="off" onChange={(event) => setEmail(event.target.value)} error={error?.fields.email} />
        <div className="field">
          <label htmlFor="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(event) => setRole(event.target.value as OrgRole)}>
            <RoleOptions mayGiveOwner={mayGiveOwner} />
          </select>
        </div>
        <button type="submit" className="button primary" disabled={busy || email.trim() === ''}>
          {busy ? 'Inviting…' : 'Invite'}
        </button>
      </div>
      {error !== undefined && error.fields.email === undefined ? <Notice tone="error">{error.message}</Notice> : null}
      {sent === undefined ? null : sent.link === null ? (
        <Notice tone="success">Invitation mailed to {sent.invitation.email}.</Notice>
      ) : (
        <>
          <Notice tone="info">This server sends no mail: pass this link on to {sent.invitation.email}. It works once, for 7 days.</Notice>
          <div className="secret">
            <code className="secret-value" data-testid="invitation-link">
              {sent.link}
            </code>
            <CopyButton text={sent.link} what="invitation link" />
          </div>
        </>
      )}
    </form>
  );
}
