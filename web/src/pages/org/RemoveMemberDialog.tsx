// Removing a member, after asking whether the keys they made for the organisation stop
// too (kept, they go on spending from its balance under the organisation's name).
import { useState } from 'react';
import { api } from '../../api';
import { ConfirmAction } from '../../components/ConfirmAction';
import { Dialog } from '../../components/Dialog';
import type { OrgMember } from '../../types';

export function RemoveMemberDialog({ member, onClose, onRemoved }: { member: OrgMember | null; onClose(): void; onRemoved(): void }) {
  return (
    <Dialog open={member !== null} title="Remove this member?" tone="danger" onClose={onClose}>
      {member === null ? null : <RemoveMember member={member} onClose={onClose} onRemoved={onRemoved} />}
    </Dialog>
  );
}

function RemoveMember({ member, onClose, onRemoved }: { member: OrgMember; onClose(): void; onRemoved(): void }) {
  const [revokeKeys, setRevokeKeys] = useState(true);
  return (
    <ConfirmAction
      label={revokeKeys ? 'Remove and revoke keys' : 'Remove member'}
      busyLabel="Removing…"
      tone="danger"
      onCancel={onClose}
      action={async () => {
        await api(`/orgs/current/members/${encodeURIComponent(member.accountId)}?revokeKeys=${revokeKeys}`, { method: 'DELETE' });
        onRemoved();
      }}
    >
      <p>
        <strong>{member.email}</strong> will no longer act for the organisation.
      </p>
      <label className="checkbox">
        <input type="checkbox" checked={revokeKeys} onChange={(event) => setRevokeKeys(event.target.checked)} />
        Also revoke the API keys they made for it
      </label>
    </ConfirmAction>
  );
}
