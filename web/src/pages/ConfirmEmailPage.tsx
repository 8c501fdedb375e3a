import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, ApiError } from '../api';
import { AuthLayout } from '../components/AuthLayout';
import { Notice } from '../components/Notice';
import { usePageTitle } from '../page-title';
import { useSession } from '../session';
import type { SessionInfo } from '../types';

/** The link mailed at sign-up: confirming it creates the account and signs it in. */
export function ConfirmEmailPage() {
  usePageTitle('Confirm your email');
  const { signedIn } = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const sent = useRef(false);

  useEffect(() => {
    // Once, even when React runs effects twice in development: the token works once.
    if (sent.current) return;
    sent.current = true;
    const token = new URLSearchParams(window.location.hash.slice(1)).get('token');
    if (token === null) {
      setError('This link is incomplete. Open the whole link from your mail.');
      return;
    }
    api<SessionInfo>('/confirm-email', { method: 'POST', body: { token }, expectUnauthenticated: true }).then(
      (session) => {
        signedIn(session);
        navigate('/', { replace: true });
      },
      (err: unknown) => setError(err instanceof ApiError ? err.message : String(err)),
    );
  }, [navigate, signedIn]);

  return (
    <AuthLayout title="Confirm your email">
      {error === null ? <p>Confirming your address…</p> : <Notice tone="error">{error}</Notice>}
      {error === null ? null : (
        <p className="auth-switch">
          <Link to="/signup">Sign up again</Link> · <Link to="/signin">Sign in</Link>
        </p>
      )}
    </AuthLayout>
  );
}
