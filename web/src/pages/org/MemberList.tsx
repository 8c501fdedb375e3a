// An organisation's members with their roles. Owners and admins change roles and remove
// members (only an owner gives or takes the owner role); everyone else reads the list.
import { useState } from 'react';
import { api } from '../../api';
import { Notice } from '../../components/Notice';
import { formatDate } from '../../format';
import { formatRole, may } from '../../org-permissions';
import { RoleOptions } from './RoleOptions';
import { useSession } from '../../session';
import type { OrgDetail, OrgMember, OrgRole } from '../../types';
import { AddMemberForm } from './AddMemberForm';
import { RemoveMemberDialog } from './RemoveMemberDialog';

export function MemberList({ detail, onChange, onRemoved }: { detail: OrgDetail; onChange(detail: OrgDetail): void; onRemoved(): void }) {
  const { account } = useSession();
  const manages = may(detail.org, 'members');
  const givesOwner = may(detail.org, 'owners');
  const [error, setError] = useState<string | undefined>(undefined);
  const [removing, setRemoving] = useState<OrgMember | null>(null);

  async function changeRole(member: OrgMember, next: OrgRole) {
    setError(undefined);
    try {
      onChange(await api<OrgDetail>(`/orgs/current/members/${encodeURIComponent(member.accountId)}`, { method: 'PATCH', body: { role: next } }));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }

  /** Whether the caller may change this member: not themselves, and an owner only by an owner. */
  const mayChange = (member: OrgMember) => manages && member.accountId !== account?.id && (member.role !== 'owner' || givesOwner);

  return (
    <section className="card flush" aria-labelledby="members-title">
      <div className="card-head">
        <h2 id="members-title" className="card-title">
          Members
        </h2>
        <p className="muted">
          Owners do everything; admins manage members, keys, budgets and webhooks; billing handles payments and plans; members use their own keys.
        </p>
      </div>
      {error === undefined ? null : (
        <div className="padded">
          <Notice tone="error">{error}</Notice>
        </div>
      )}
      <table className="table stacked" data-testid="org-members">
        <caption className="visually-hidden">Members and their roles</caption>
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
            <th scope="col" className="actions">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {detail.members.map((member) => (
            <tr key={member.accountId}>
              <th scope="row" data-label="Member" className="member-cell">
                <span className="member-name">{member.name ?? member.email}</span>
                {member.name === null ? null : <span className="member-email muted">{member.email}</span>}
                {member.accountId === account?.id ? <span className="badge accent">You</span> : null}
              </th>
              <td data-label="Role">
                {mayChange(member) ? (
                  <select
                    className="role-select"
                    aria-label={`Role of ${member.email}`}
                    value={member.role}
                    onChange={(event) => void changeRole(member, event.target.value as OrgRole)}
                  >
                    <RoleOptions mayGiveOwner={givesOwner} />
                  </select>
                ) : (
                  <span className="badge neutral">{formatRole(member.role)}</span>
                )}
              </td>
              <td data-label="Joined">{formatDate(member.joinedAt)}</td>
              <td className="actions">
                {mayChange(member) ? (
                  <button type="button" className="button small danger-outline" aria-label={`Remove ${member.email}`} onClick={() => setRemoving(member)}>
                    Remove
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <RemoveMemberDialog
        member={removing}
        onClose={() => setRemoving(null)}
        onRemoved={() => {
          setRemoving(null);
          onRemoved();
        }}
      />
      {manages ? <AddMemberForm mayGiveOwner={givesOwner} onAdded={onChange} /> : null}
    </section>
  );
}
