import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, ApiError } from '../api';
import { Notice } from '../components/Notice';
import { PageHeader } from '../components/PageHeader';
import { TextField } from '../components/TextField';
import { formatDate, formatPlanName } from '../format';
import { usePageTitle } from '../page-title';
import { useSession } from '../session';

const MIN_PASSWORD_LENGTH = 10;

export function SettingsPage() {
  usePageTitle('Settings');
  const { account, signOut } = useSession();
  if (account === null) return null;

  return (
    <>
      <PageHeader title="Settings" />
      <div className="grid two top">
        <section className="card" aria-labelledby="account-title">
          <h2 id="account-title" className="card-title">
            Account
          </h2>
          <dl className="details">
            <div>
              <dt>Email</dt>
              <dd>{account.email}</dd>
            </div>
            {account.name ? (
              <div>
                <dt>Name</dt>
                <dd>{account.name}</dd>
              </div>
            ) : null}
            <div>
              <dt>Plan</dt>
              <dd>{formatPlanName(account.tier)}</dd>
            </div>
            <div>
              <dt>Member since</dt>
              <dd>{formatDate(account.createdAt)}</dd>
            </div>
          </dl>
          <div className="card-footer">
            <button type="button" className="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </section>
        <ChangePassword />
      </div>
      <section className="card" aria-labelledby="webhooks-title">
        <h2 id="webhooks-title" className="card-title">
          Webhooks
        </h2>
        <p className="muted">Have payments, revoked keys, low balances and plan changes posted to your own endpoints as they happen.</p>
        <div className="card-footer">
          <Link to="/settings/webhooks" className="button">
            Manage webhooks
          </Link>
        </div>
      </section>
    </>
  );
}

function ChangePassword() {
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [mismatch, setMismatch] = useState(false);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setDone(false);
    setError(undefined);
    if (newPassword !== confirmation) {
      setMismatch(true);
      return;
    }
    setMismatch(false);
    setBusy(true);
    try {
      await api('/password', { method: 'POST', body: { currentPassword, newPassword } });
      setCurrentPassword('');
      setNewPassword('');
      setConfirmation('');
      setDone(true);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  }

  const fields = error?.fields ?? {};
  const generalError = error !== undefined && Object.keys(fields).length === 0 ? error.message : undefined;
  return (
    <section className="card" aria-labelledby="password-title">
      <h2 id="password-title" className="card-title">
        Change password
      </h2>
      <p className="muted">Changing it signs you out everywhere else.</p>
      {done ? <Notice tone="success">Your password was changed.</Notice> : null}
      {generalError === undefined ? null : <Notice tone="error">{generalError}</Notice>}
      <form onSubmit={submit} className="form">
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          value={currentPassword}
          onChange={(e) => setCurrentPassword(e.target.value)}
          error={fields.currentPassword}
        />
        <TextField
          label="New password"
          type="password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          maxLength={200}
          hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
          value={newPassword}
          onChange={(e) => setNewPassword(e.target.value)}
          error={fields.newPassword}
        />
        <TextField
          label="Confirm new password"
          type="password"
          autoComplete="new-password"
          required
          value={confirmation}
          onChange={(e) => setConfirmation(e.target.value)}
          error={mismatch ? 'The two new passwords differ.' : undefined}
        />
        <div>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? 'Changing…' : 'Change password'}
          </button>
        </div>
      </form>
    </section>
  );
}
