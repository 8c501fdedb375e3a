// Making an organisation: its name, and the dashboard acts for it at once, on its page.
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { ApiError } from '../api';
import { useOrgs } from '../orgs';
import { Dialog } from './Dialog';
import { Notice } from './Notice';
import { TextField } from './TextField';

export function NewOrgDialog({ open, onClose }: { open: boolean; onClose(): void }) {
  return (
    <Dialog open={open} title="New organisation" onClose={onClose}>
      <NewOrgForm onClose={onClose} />
    </Dialog>
  );
}

function NewOrgForm({ onClose }: { onClose(): void }) {
  const { create } = useOrgs();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await create(name);
      onClose();
      void navigate('/org');
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      setBusy(false);
    }
  }

  return (
    <form className="form" onSubmit={(event) => void submit(event)}>
      <p className="muted">An organisation has one balance for its members, each with a role and, if you like, a monthly budget. You will be its owner.</p>
      <TextField label="Organisation name" value={name} required maxLength={200} autoFocus onChange={(event) => setName(event.target.value)} error={error?.fields.name} />
      {error !== undefined && error.fields.name === undefined ? <Notice tone="error">{error.message}</Notice> : null}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy || name.trim() === ''}>
          {busy ? 'Creating…' : 'Create organisation'}
        </button>
      </div>
    </form>
  );
}
