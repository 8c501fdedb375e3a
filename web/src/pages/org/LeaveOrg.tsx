// Leaving the organisation the dashboard acts for: anyone may, with or without the keys
// they made for it; the dashboard then acts for their personal account.
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api } from '../../api';
import { ConfirmAction } from '../../components/ConfirmAction';
import { Dialog } from '../../components/Dialog';
import { useOrgs } from '../../orgs';
import { useSession } from '../../session';

export function LeaveOrg({ orgName }: { orgName: string }) {
  const { account } = useSession();
  const { switchTo } = useOrgs();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [revokeKeys, setRevokeKeys] = useState(true);
  if (account === null) return null;

  return (
    <>
      <button type="button" className="button danger-outline" onClick={() => setOpen(true)}>
        Leave organisation
      </button>
      <Dialog open={open} title="Leave this organisation?" tone="danger" onClose={() => setOpen(false)}>
        <ConfirmAction
          label="Leave"
          busyLabel="Leaving…"
          tone="danger"
          onCancel={() => setOpen(false)}
          action={async () => {
            await api(`/orgs/current/members/${encodeURIComponent(account.id)}?revokeKeys=${revokeKeys}`, { method: 'DELETE' });
            await switchTo(null);
            void navigate('/');
          }}
        >
          <p>
            You will no longer see or spend from <strong>{orgName}</strong>. Someone who manages its members can add you again.
          </p>
          <label className="checkbox">
            <input type="checkbox" checked={revokeKeys} onChange={(event) => setRevokeKeys(event.target.checked)} />
            Revoke the API keys I made for it
          </label>
        </ConfirmAction>
      </Dialog>
    </>
  );
}
