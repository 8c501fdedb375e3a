import { useState, type FormEvent } from 'react';
import { Link, Navigate, useNavigate } from 'react-router';
import { api, ApiError } from '../api';
import { AuthLayout } from '../components/AuthLayout';
import { ContactOperator } from '../components/ContactOperator';
import { Notice } from '../components/Notice';
import { TextField } from '../components/TextField';
import { usePageTitle } from '../page-title';
import { useSession } from '../session';
import type { ConfirmationSent, SessionInfo } from '../types';

const MIN_PASSWORD_LENGTH = 10;

export function SignUpPage() {
  usePageTitle('Create an account');
  const { account, config, signedIn } = useSession();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [emailToConfirm, setEmailToConfirm] = useState<string | null>(null);

  if (account !== null && !busy) return <Navigate to="/" replace />;

  if (!config.signupOpen) {
    return (
      <AuthLayout title="Sign-up is closed">
        <p>
          New accounts on this lmgate are created by its operator. If you need one, <ContactOperator>please ask them</ContactOperator>.
        </p>
        <p className="auth-switch">
          Already have an account? <Link to="/signin">Sign in</Link>
        </p>
      </AuthLayout>
    );
  }

  if (emailToConfirm !== null) {
    return (
      <AuthLayout title="Check your mail">
        <Notice tone="success">
          We sent a link to {emailToConfirm}. Open it within 24 hours to confirm the address: your account is created then.
        </Notice>
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
      const body = name.trim() === '' ? { email, password } : { email, password, name: name.trim() };
      const answer = await api<SessionInfo | ConfirmationSent>('/signup', { method: 'POST', body, expectUnauthenticated: true });
      if ('emailToConfirm' in answer) {
        setEmailToConfirm(answer.emailToConfirm);
        setBusy(false);
        return;
      }
      signedIn(answer);
      navigate('/', { replace: true });
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      setBusy(false);
    }
  }

  const fields = error?.fields ?? {};
  const hasFieldErrors = Object.keys(fields).length > 0;
  return (
    <AuthLayout title="Create your account" subtitle="Get an API key and start calling models in a minute.">
      {error === undefined ? null : <Notice tone="error">{hasFieldErrors ? 'Please check the fields below.' : error.message}</Notice>}
      <form onSubmit={submit} className="form">
        <TextField label="Name (optional)" name="name" autoComplete="name" maxLength={200} value={name} onChange={(e) => setName(e.target.value)} error={fields.name} />
        <TextField label="Email" type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} error={fields.email} />
        <TextField
          label="Password"
          type="password"
          name="password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          maxLength={200}
          hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={fields.password}
        />
        <button type="submit" className="button primary wide" disabled={busy}>
          {busy ? 'Creating your account…' : 'Create account'}
        </button>
      </form>
      <p className="auth-switch">
        Already have an account? <Link to="/signin">Sign in</Link>
      </p>
    </AuthLayout>
  );
}
