import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { useSession } from '../session';

/**
 * Signed-in pages. Anyone else is sent to sign in, and brought back to where they were
 * afterwards unless they signed out themselves.
 */
export function RequireSession({ children }: { children: ReactNode }) {
  const { account, ending } = useSession();
  const location = useLocation();
  if (account === null) {
    const next = location.pathname + location.search;
    const comeBack = ending !== 'signed-out' && next !== '/';
    return <Navigate to={comeBack ? `/signin?next=${encodeURIComponent(next)}` : '/signin'} replace />;
  }
  return <>{children}</>;
}
