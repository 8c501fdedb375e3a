import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, ApiError } from '../api';
import { AuthLayout } from '../components/AuthLayout';
import { Notice } from '../components/Notice';
import { TextField } from '../components/TextField';
import { usePageTitle } from '../page-title';

const MIN_PASSWORD_LENGTH = 10;

/** The token of a reset link: in the fragment (`#token=`), which the browser sends to no server. */
function tokenFromLink(): string | null {
  return new URLSearchParams(window.location.hash.slice(1)).get('token');
}

export function ResetPasswordPage() {
  usePageTitle('Choose a new password');
  const [token] = useState(tokenFromLink);
  const [password, setPassword] = useState('');
  const [repeated, setRepeated] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);

  if (token === null) {
    return (
      <AuthLayout title="Reset your password">
        <Notice tone="error">This link is incomplete. Open the whole link from your mail, or ask for a new one.</Notice>
        <p className="auth-switch">
          <Link to="/forgot-password">Ask for a new link</Link> · <Link to="/signin">Sign in</Link>
        </p>
      </AuthLayout>
    );
  }

  if (done) {
    return (
      <AuthLayout title="Your password is set">
        <Notice tone="success">You can now sign in with your new password. Every other session of your account was signed out.</Notice>
        <p className="auth-switch">
          <Link to="/signin">Sign in</Link>
        </p>
      </AuthLayout>
    );
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (password !== repeated) {
      setError(new ApiError(0, 'The two passwords differ.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await api('/password-reset', { method: 'POST', body: { token, newPassword: password }, expectUnauthenticated: true });
      // The link is spent: keep it out of the address bar and the history.
      window.history.replaceState(null, '', window.location.pathname);
      setDone(true);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  }

  const fields = error?.fields ?? {};
  const hasFieldErrors = Object.keys(fields).length > 0;
  return (
    <AuthLayout title="Choose a new password" subtitle="Then sign in with it.">
      {error === undefined ? null : <Notice tone="error">{hasFieldErrors ? 'Please check the fields below.' : error.message}</Notice>}
      <form onSubmit={submit} className="form">
        <TextField
          label="New password"
          type="password"
          name="new-password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          maxLength={200}
          hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={fields.newPassword}
        />
        <TextField
          label="New password again"
          type="password"
          name="repeat-password"
          autoComplete="new-password"
          required
          value={repeated}
          onChange={(e) => setRepeated(e.target.value)}
        />
        <button type="submit" className="button primary wide" disabled={busy}>
          {busy ? 'Saving…' : 'Set password'}
        </button>
      </form>
      {error?.status === 410 ? (
        <p className="auth-switch">
          <Link to="/forgot-password">Ask for a new link</Link>
        </p>
      ) : null}
    </AuthLayout>
  );
}
