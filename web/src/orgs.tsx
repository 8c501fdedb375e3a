// The organisations the signed-in person belongs to, and which one the session acts for
// (null: their own account). The server keeps the choice in the session; every dashboard
// call answers for it, so after a switch each page is drawn again from scratch (`version`).
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api } from './api';
import type { OrgDetail, OrgRef, Orgs } from './types';

interface OrgContext {
  /** Undefined until /orgs has answered. */
  orgs: Orgs | undefined;
  current: OrgRef | null;
  /** Changes on every switch: the pages are keyed by it, so they read their data again. */
  version: number;
  switchTo(orgId: string | null): Promise<void>;
  /** Makes an organisation; the session acts for it from then on. */
  create(name: string): Promise<OrgDetail>;
  reload(): void;
}

const OrgsContext = createContext<OrgContext | null>(null);

export function OrgsProvider({ children }: { children: ReactNode }) {
  const [orgs, setOrgs] = useState<Orgs | undefined>(undefined);
  const [version, setVersion] = useState(0);
  const [reads, setReads] = useState(0);

  useEffect(() => {
    let cancelled = false;
    api<Orgs>('/orgs').then(
      (value) => {
        if (!cancelled) setOrgs(value);
      },
      // Without the list the person still works in the account the server acts for; the
      // switcher waits for the next read.
      () => undefined,
    );
    return () => {
      cancelled = true;
    };
  }, [reads]);

  const reload = useCallback(() => setReads((n) => n + 1), []);

  const switchTo = useCallback(async (orgId: string | null) => {
    await api('/orgs/switch', { method: 'POST', body: { orgId } });
    setOrgs((known) => (known === undefined ? known : { ...known, current: known.orgs.find((org) => org.id === orgId) ?? null }));
    setVersion((n) => n + 1);
    setReads((n) => n + 1);
  }, []);

  const create = useCallback(async (name: string) => {
    const detail = await api<OrgDetail>('/orgs', { method: 'POST', body: { name } });
    setOrgs((known) => ({ current: detail.org, orgs: [...(known?.orgs ?? []), detail.org] }));
    setVersion((n) => n + 1);
    setReads((n) => n + 1);
    return detail;
  }, []);

  const value = useMemo<OrgContext>(() => ({ orgs, current: orgs?.current ?? null, version, switchTo, create, reload }), [orgs, version, switchTo, create, reload]);
  return <OrgsContext.Provider value={value}>{children}</OrgsContext.Provider>;
}

/** Null outside the customer's dashboard (the operator console has no organisations). */
export function useOptionalOrgs(): OrgContext | null {
  return useContext(OrgsContext);
}

export function useOrgs(): OrgContext {
  const orgs = useContext(OrgsContext);
  if (orgs === null) throw new Error('useOrgs outside OrgsProvider');
  return orgs;
}
