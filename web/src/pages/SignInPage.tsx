import { useState, type FormEvent } from 'react';
import { Link, Navigate, useNavigate, useSearchParams } from 'react-router';
import { api, ApiError } from '../api';
import { AuthLayout } from '../components/AuthLayout';
import { Notice } from '../components/Notice';
import { TextField } from '../components/TextField';
import { formatWait } from '../format';
import { usePageTitle } from '../page-title';
import { useSession } from '../session';
import type { SessionInfo } from '../types';

export function SignInPage() {
  usePageTitle('Sign in');
  const { account, config, ending, signedIn } = useSession();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // A sign-in through the identity provider that was refused comes back here with its reason.
  const [error, setError] = useState<string | undefined>(() => ssoProblem(params.get('sso_error')));
  const [busy, setBusy] = useState(false);

  if (account !== null && !busy) return <Navigate to={next} replace />;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await api<SessionInfo>('/signin', { method: 'POST', body: { email, password }, expectUnauthenticated: true });
      signedIn(session);
      navigate(next, { replace: true });
    } catch (err) {
      setError(signInProblem(err));
      setBusy(false);
    }
  }

  return (
    <AuthLayout title="Sign in" subtitle="Manage your API keys, usage and credits.">
      {ending === 'ended' && error === undefined ? <Notice tone="info">Your session has ended. Please sign in again.</Notice> : null}
      {error === undefined ? null : <Notice tone="error">{error}</Notice>}
      {config.sso === null ? null : (
        <>
          {/* A navigation, not a fetch: the server sends the browser on to the provider. */}
          <a className="button wide" href={`/api/dashboard/sign-in/oidc?next=${encodeURIComponent(next)}`}>
            {config.sso.label}
          </a>
          <p className="auth-or" aria-hidden="true">
            <span>or with a password</span>
          </p>
        </>
      )}
      <form onSubmit={submit} className="form">
        <TextField label="Email" type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <TextField
          label="Password"
          type="password"
          name="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <button type="submit" className="button primary wide" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {config.passwordResetByMail ? (
        <p className="auth-switch">
          <Link to="/forgot-password">Forgot password?</Link>
        </p>
      ) : null}
      {config.signupOpen ? (
        <p className="auth-switch">
          New to lmgate? <Link to="/signup">Create an account</Link>
        </p>
      ) : null}
    </AuthLayout>
  );
}

function signInProblem(err: unknown): string {
  if (!(err instanceof ApiError)) return String(err);
  if (err.status === 429) {
    const wait = err.retryAfterSec === null ? 'later' : formatWait(err.retryAfterSec);
    return `Too many failed sign-in attempts. For your security, sign-in is paused; please try again ${wait}.`;
  }
  return err.message;
}

/** What the server's `sso_error` reasons (web-session/oidc-sign-in.ts) mean to the person signing in. */
const SSO_PROBLEMS: Record<string, string> = {
  expired: 'The sign-in with your identity provider took too long or was started in another browser. Please try again.',
  state: 'The answer from your identity provider did not belong to this sign-in. Please try again.',
  denied: 'The sign-in was cancelled at your identity provider.',
  unverified: 'Your identity provider has not verified your email address, so it cannot be used to sign in here.',
  domain: 'Accounts with this email domain cannot sign in here. Use the address your organisation gave you.',
  taken: 'The account with this email address belongs to someone else at your identity provider. Please contact the operator.',
  no_account: 'There is no account for this email address, and new accounts are created by the operator.',
  failed: 'The sign-in with your identity provider could not be completed. Please try again, or sign in with your password.',
};

function ssoProblem(reason: string | null): string | undefined {
  if (reason === null) return undefined;
  return SSO_PROBLEMS[reason] ?? SSO_PROBLEMS.failed;
}

/** Only a path of this site, so a crafted link cannot send people elsewhere after signing in. */
function safeNext(next: string | null): string {
  return next !== null && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}
