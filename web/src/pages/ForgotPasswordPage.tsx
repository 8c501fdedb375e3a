import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, ApiError } from '../api';
import { AuthLayout } from '../components/AuthLayout';
import { ContactOperator } from '../components/ContactOperator';
import { Notice } from '../components/Notice';
import { TextField } from '../components/TextField';
import { formatWait } from '../format';
import { usePageTitle } from '../page-title';
import { useSession } from '../session';

export function ForgotPasswordPage() {
  usePageTitle('Forgot password');
  const { config } = useSession();
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);

  if (!config.passwordResetByMail) {
    return (
      <AuthLayout title="Forgot password">
        <p>
          This lmgate sends no mail. For a link to choose a new password, <ContactOperator />.
        </p>
        <p className="auth-switch">
          <Link to="/signin">Back to sign in</Link>
        </p>
      </AuthLayout>
    );
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api('/forgot-password', { method: 'POST', body: { email }, expectUnauthenticated: true });
      setSentTo(email);
    } catch (err) {
      if (err instanceof ApiError && err.status === 429) {
        setError(`Too many requests. Please try again ${err.retryAfterSec === null ? 'later' : formatWait(err.retryAfterSec)}.`);
      } else {
        setError(err instanceof ApiError ? err.message : String(err));
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <AuthLayout title="Forgot password" subtitle="We mail you a link to choose a new one.">
      {sentTo === null ? null : (
        <Notice tone="success">If an account uses {sentTo}, a link is on its way there. It works once, within an hour.</Notice>
      )}
      {error === undefined ? null : <Notice tone="error">{error}</Notice>}
      <form onSubmit={submit} className="form">
        <TextField label="Email" type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <button type="submit" className="button primary wide" disabled={busy}>
          {busy ? 'Sending…' : 'Send the link'}
        </button>
      </form>
      <p className="auth-switch">
        <Link to="/signin">Back to sign in</Link>
      </p>
    </AuthLayout>
  );
}
