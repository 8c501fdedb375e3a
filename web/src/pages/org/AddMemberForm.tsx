// Adding someone who already has an account here, by their email, with a role.
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../../api';
import { Notice } from '../../components/Notice';
import { TextField } from '../../components/TextField';
import { RoleOptions } from './RoleOptions';
import type { OrgDetail, OrgRole } from '../../types';

export function AddMemberForm({ mayGiveOwner, onAdded }: { mayGiveOwner: boolean; onAdded(detail: OrgDetail): void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<OrgRole>('member');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [added, setAdded] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setAdded(undefined);
    try {
      onAdded(await api<OrgDetail>('/orgs/current/members', { method: 'POST', body: { email: email.trim(), role } }));
      setAdded(email.trim());
      setEmail('');
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="form padded member-add" aria-label="Add a member" onSubmit={(event) => void submit(event)}>
      <h3 className="subheading">Add someone with an account</h3>
      <div className="member-add-fields">
        <TextField label="Email" type="email" value={email} required autoComplete="off" onChange={(event) => setEmail(event.target.value)} error={error?.fields.email} />
        <div className="field">
          <label htmlFor="member-add-role">Role</label>
          <select id="member-add-role" value={role} onChange={(event) => setRole(event.target.value as OrgRole)}>
            <RoleOptions mayGiveOwner={mayGiveOwner} />
          </select>
        </div>
        <button type="submit" className="button primary" disabled={busy || email.trim() === ''}>
          {busy ? 'Adding…' : 'Add member'}
        </button>
      </div>
      {error !== undefined && error.fields.email === undefined ? (
        <Notice tone="error">{error.status === 404 ? `No account uses ${email.trim()}. They can sign up first, then be added.` : error.message}</Notice>
      ) : null}
      {added === undefined ? null : <Notice tone="success">{added} is a member now.</Notice>}
    </form>
  );
}
