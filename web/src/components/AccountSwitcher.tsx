// Which account the dashboard acts for: the person's own or one of their organisations,
// with their role in each, and a way to make a new organisation. A button that opens a
// list (closed by a choice, Escape or a click elsewhere); in the top bar on a wide screen,
// at the top of the menu on a phone.
import { useEffect, useId, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { formatRole } from '../org-permissions';
import { useOrgs } from '../orgs';
import { useSession } from '../session';
import { NewOrgDialog } from './NewOrgDialog';
import { Notice } from './Notice';

const OWN_ACCOUNT = 'Personal account';

/** `other`: an operator's way to the console, in the list where the bar has no room for it (960 to 1199 pixels). */
export function AccountSwitcher({ className, other = null }: { className: string; other?: { to: string; label: string } | null }) {
  const { account } = useSession();
  const { orgs, current, switchTo } = useOrgs();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const panelId = useId();

  useEffect(() => {
    if (!open) return;
    const closeOutside = (event: MouseEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', closeOutside);
    return () => document.removeEventListener('mousedown', closeOutside);
  }, [open]);

  async function choose(orgId: string | null) {
    setError(undefined);
    if (orgId === (current?.id ?? null)) {
      setOpen(false);
      return;
    }
    try {
      await switchTo(orgId);
      setOpen(false);
      // The organisation's page has nothing to show for the person's own account.
      if (orgId === null && window.location.pathname === '/org') void navigate('/');
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }

  return (
    <div
      ref={rootRef}
      className={`switcher ${className}`}
      onKeyDown={(event) => {
        if (event.key !== 'Escape' || !open) return;
        event.stopPropagation();
        setOpen(false);
        buttonRef.current?.focus();
      }}
    >
      <button
        type="button"
        ref={buttonRef}
        className="button ghost small switcher-button"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => setOpen((was) => !was)}
      >
        <span className="visually-hidden">Account: </span>
        {/* Until /orgs answers it is not known whose account the session acts for. */}
        <span className="switcher-name">{orgs === undefined ? '…' : (current?.name ?? 'Personal')}</span>
        <span className="switcher-caret" aria-hidden="true" />
      </button>
      {/* Drawn only while open: the bar and the menu each hold a switcher. */}
      <div id={panelId} className="switcher-panel" hidden={!open}>
        {open ? (
          <>
            <p className="switcher-person muted" title={account?.email}>
              Signed in as <strong>{account?.email}</strong>
            </p>
            <p className="subheading">Act for</p>
            <ul className="switcher-list" aria-label="Accounts">
              <li>
                <AccountChoice name={OWN_ACCOUNT} chosen={current === null} onChoose={() => void choose(null)} />
              </li>
              {(orgs?.orgs ?? []).map((org) => (
                <li key={org.id}>
                  <AccountChoice name={org.name} role={formatRole(org.role)} chosen={current?.id === org.id} onChoose={() => void choose(org.id)} />
                </li>
              ))}
            </ul>
            {error === undefined ? null : <Notice tone="error">{error}</Notice>}
            <button
              type="button"
              className="button small"
              onClick={() => {
                setOpen(false);
                setCreating(true);
              }}
            >
              New organisation
            </button>
            {other === null ? null : (
              <Link to={other.to} className="button small switcher-other">
                {other.label}
              </Link>
            )}
          </>
        ) : null}
      </div>
      <NewOrgDialog open={creating} onClose={() => setCreating(false)} />
    </div>
  );
}

function AccountChoice({ name, role, chosen, onChoose }: { name: string; role?: string; chosen: boolean; onChoose(): void }) {
  return (
    <button type="button" className="switcher-choice" aria-current={chosen} onClick={onChoose}>
      <span className="switcher-choice-name">{name}</span>
      {role === undefined ? null : <span className="badge neutral">{role}</span>}
    </button>
  );
}
