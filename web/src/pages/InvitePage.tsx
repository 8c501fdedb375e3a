// The invitation's link (/invite/<token>): what it offers, then, as the invited address,
// accept or decline. Someone signed out signs in (the address prefilled) or, when the
// address has no account, signs up here: the link came to the address, so no confirmation
// mail follows. A link that expired, was used or was withdrawn says so.
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, ApiError } from '../api';
import { AuthLayout } from '../components/AuthLayout';
import { Notice } from '../components/Notice';
import { TextField } from '../components/TextField';
import { formatDate } from '../format';
import { formatRole } from '../org-permissions';
import { usePageTitle } from '../page-title';
import { useSession } from '../session';
import type { InvitationPreview, SessionInfo } from '../types';

const MIN_PASSWORD_LENGTH = 10;

type Load = { kind: 'loading' } | { kind: 'failed'; message: string } | { kind: 'ready'; preview: InvitationPreview } | { kind: 'declined' };

export function InvitePage() {
  usePageTitle('Invitation');
  const { token = '' } = useParams();
  const { account, signOut } = useSession();
  const navigate = useNavigate();
  const [load, setLoad] = useState<Load>({ kind: 'loading' });
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const path = `/invitations/${encodeURIComponent(token)}`;

  useEffect(() => {
    let cancelled = false;
    api<InvitationPreview>(path, { expectUnauthenticated: true }).then(
      (preview) => !cancelled && setLoad({ kind: 'ready', preview }),
      (err: unknown) => !cancelled && setLoad({ kind: 'failed', message: err instanceof Error ? err.message : String(err) }),
    );
    return () => {
      cancelled = true;
    };
  }, [path]);

  const act = useCallback(
    async (step: () => Promise<void>) => {
      setBusy(true);
      setError(undefined);
      try {
        await step();
      } catch (err) {
        setError(err instanceof ApiError ? err.message : String(err));
      } finally {
        setBusy(false);
      }
    },
    [],
  );
  const accept = () =>
    act(async () => {
      await api(`${path}/accept`, { method: 'POST' });
      navigate('/org', { replace: true });
    });
  const decline = () =>
    act(async () => {
      await api(`${path}/decline`, { method: 'POST', expectUnauthenticated: true });
      setLoad({ kind: 'declined' });
    });

  if (load.kind === 'loading') {
    return (
      <AuthLayout title="Invitation">
        <p className="muted">Loading…</p>
      </AuthLayout>
    );
  }
  if (load.kind === 'failed' || load.kind === 'declined') {
    return (
      <AuthLayout title="Invitation">
        {load.kind === 'failed' ? <Notice tone="error">{load.message}</Notice> : <Notice tone="info">You declined the invitation.</Notice>}
        <p className="auth-switch">
          <Link to="/">Go to the dashboard</Link>
        </p>
      </AuthLayout>
    );
  }

  const { preview } = load;
  const isInvitee = account !== null && account.email.toLowerCase() === preview.email;
  return (
    <AuthLayout title={`Join ${preview.orgName}`} subtitle={`${preview.email} is invited as ${formatRole(preview.role).toLowerCase()}, until ${formatDate(preview.expiresAt)}.`}>
      {error === undefined ? null : <Notice tone="error">{error}</Notice>}
      {isInvitee ? (
        <div className="form">
          <button type="button" className="button primary wide" disabled={busy} onClick={() => void accept()}>
            Accept and join {preview.orgName}
          </button>
          <button type="button" className="button wide" disabled={busy} onClick={() => void decline()}>
            Decline
          </button>
        </div>
      ) : account !== null ? (
        <>
          <Notice tone="warning">
            You are signed in as {account.email}. This invitation is for {preview.email}: sign out, then sign in with that address.
          </Notice>
          <button type="button" className="button wide" onClick={() => void signOut()}>
            Sign out
          </button>
        </>
      ) : (
        <>
          <IdentifyForm preview={preview} path={path} busy={busy} act={act} onSignedUp={() => navigate('/org', { replace: true })} />
          <button type="button" className="button wide" disabled={busy} onClick={() => void decline()}>
            Decline
          </button>
        </>
      )}
    </AuthLayout>
  );
}

/** Signed out: sign in as the invited address, or sign up with it (which accepts at once). */
function IdentifyForm({
  preview,
  path,
  busy,
  act,
  onSignedUp,
}: {
  preview: InvitationPreview;
  path: string;
  busy: boolean;
  act(step: () => Promise<void>): Promise<void>;
  onSignedUp(): void;
}) {
  const { signedIn } = useSession();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');

  function submit(event: FormEvent) {
    event.preventDefault();
    void act(async () => {
      if (preview.hasAccount) {
        signedIn(await api<SessionInfo>('/signin', { method: 'POST', body: { email: preview.email, password }, expectUnauthenticated: true }));
        return;
      }
      signedIn(await api<SessionInfo>(`${path}/signup`, { method: 'POST', body: { password, name: name.trim() || null }, expectUnauthenticated: true }));
      onSignedUp();
    });
  }

  return (
    <form onSubmit={submit} className="form">
      <p className="muted">{preview.hasAccount ? 'Sign in to accept.' : 'Create your account to accept: it joins the organisation at once.'}</p>
      {preview.hasAccount ? null : <TextField label="Name (optional)" name="name" autoComplete="name" maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
      <TextField label="Email" type="email" name="email" autoComplete="username" readOnly value={preview.email} />
      <TextField
        label="Password"
        type="password"
        name="password"
        autoComplete={preview.hasAccount ? 'current-password' : 'new-password'}
        required
        minLength={preview.hasAccount ? undefined : MIN_PASSWORD_LENGTH}
        maxLength={200}
        hint={preview.hasAccount ? undefined : `At least ${MIN_PASSWORD_LENGTH} characters.`}
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      <button type="submit" className="button primary wide" disabled={busy}>
        {preview.hasAccount ? 'Sign in' : 'Create account and join'}
      </button>
    </form>
  );
}
