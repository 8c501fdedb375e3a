// Who is signed in, and the server's public settings. Loaded once when the app starts;
// every page below reads it with useSession().
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ApiError, setCsrfToken, whenUnauthenticated } from './api';
import type { Account, DashboardConfig, SessionInfo } from './types';

interface Session {
  config: DashboardConfig;
  account: Account | null;
  /** How the last session ended: by the server (expired, revoked elsewhere) or by signing out. */
  ending: Ending;
  signedIn(info: SessionInfo): void;
  updateAccount(account: Account): void;
  signOut(): Promise<void>;
}

type Ending = 'none' | 'ended' | 'signed-out';

const SessionContext = createContext<Session | null>(null);

type LoadState = { kind: 'loading' } | { kind: 'failed'; message: string } | { kind: 'ready'; config: DashboardConfig };

export function SessionProvider({ children }: { children: ReactNode }) {
  const [load, setLoad] = useState<LoadState>({ kind: 'loading' });
  const [account, setAccount] = useState<Account | null>(null);
  const [ending, setEnding] = useState<Ending>('none');
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    // Only calls made while signed in can hit this, so it always means the session ended.
    whenUnauthenticated(() => {
      setEnding('ended');
      setAccount(null);
    });
    let cancelled = false;
    Promise.all([api<DashboardConfig>('/config'), currentSession()]).then(
      ([config, session]) => {
        if (cancelled) return;
        if (session !== null) {
          setCsrfToken(session.csrfToken);
          setAccount(session.account);
        }
        setLoad({ kind: 'ready', config });
      },
      (err: unknown) => {
        if (!cancelled) setLoad({ kind: 'failed', message: err instanceof Error ? err.message : String(err) });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [attempt]);

  const signedIn = useCallback((info: SessionInfo) => {
    setCsrfToken(info.csrfToken);
    setEnding('none');
    setAccount(info.account);
  }, []);

  const signOut = useCallback(async () => {
    try {
      await api('/signout', { method: 'POST', expectUnauthenticated: true });
    } catch {
      // Already ended (401) or the server is unreachable: the app forgets the session anyway.
    }
    setCsrfToken(null);
    setEnding('signed-out');
    setAccount(null);
  }, []);

  const value = useMemo<Session | null>(
    () => (load.kind === 'ready' ? { config: load.config, account, ending, signedIn, updateAccount: setAccount, signOut } : null),
    [load, account, ending, signedIn, signOut],
  );

  if (load.kind === 'loading') {
    return (
      <div className="boot" aria-busy="true">
        <p className="muted">Loading…</p>
      </div>
    );
  }
  if (load.kind === 'failed') {
    return (
      <div className="boot">
        <div className="card boot-card">
          <h1>The dashboard could not start</h1>
          <p role="alert">{load.message}</p>
          <button type="button" className="button primary" onClick={() => { setLoad({ kind: 'loading' }); setAttempt((n) => n + 1); }}>
            Try again
          </button>
        </div>
      </div>
    );
  }
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

async function currentSession(): Promise<SessionInfo | null> {
  try {
    return await api<SessionInfo>('/session', { expectUnauthenticated: true });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === null) throw new Error('useSession outside SessionProvider');
  return session;
}
