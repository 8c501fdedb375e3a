import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { useSession } from '../session';

/** Signed-in pages; anyone else is sent to sign in and brought back afterwards. */
export function RequireSession({ children }: { children: ReactNode }) {
  const { account } = useSession();
  const location = useLocation();
  if (account === null) {
    const next = location.pathname + location.search;
    return <Navigate to={next === '/' ? '/signin' : `/signin?next=${encodeURIComponent(next)}`} replace />;
  }
  return <>{children}</>;
}
