// The frame of every signed-in page: the top bar with the pages and sign-out, and the
// page itself. On a phone the pages are behind a Menu button, which opens them as a list
// and closes after a choice (or Escape). After a navigation the new page starts at its top
// and the focus moves to its heading, so screen readers announce it and Tab starts from the page.
import { useEffect, useRef, useState } from 'react';
import { Link, NavLink, Outlet, useLocation } from 'react-router';
import { useOptionalOrgs } from '../orgs';
import { useSession } from '../session';
import { AccountSwitcher } from './AccountSwitcher';
import { Logo } from './Logo';

export interface NavPage {
  to: string;
  label: string;
}

const PAGES: readonly NavPage[] = [
  { to: '/', label: 'Overview' },
  { to: '/keys', label: 'API Keys' },
  { to: '/usage', label: 'Usage' },
  { to: '/requests', label: 'Requests' },
  { to: '/models', label: 'Models' },
  { to: '/billing/plans', label: 'Billing' },
  { to: '/settings', label: 'Settings' },
];

/** The customer's pages by default; the console passes its own. */
export function Layout({ pages = PAGES, home = '/' }: { pages?: readonly NavPage[]; home?: string }) {
  const { account, signOut } = useSession();
  // The customer's dashboard acts for an account or an organisation; the console for neither.
  const orgs = useOptionalOrgs();
  const shownPages = orgs?.current ? withOrgPage(pages) : pages;
  const { pathname, hash } = useLocation();
  const mainRef = useRef<HTMLElement>(null);
  const menuButtonRef = useRef<HTMLButtonElement>(null);
  const shownPath = useRef(pathname + hash);
  const [signingOut, setSigningOut] = useState(false);
  const [menuOpen, setMenuOpen] = useState(false);
  // An operator moves between the dashboard and the console: beside the account on a wide
  // screen, and at the end of the menu on a phone, where the bar has no room for it.
  const other = account?.role !== 'operator' ? null : home === '/' ? { to: '/admin', label: 'Console' } : { to: '/', label: 'Dashboard' };

  useEffect(() => {
    setMenuOpen(false);
    if (shownPath.current === pathname + hash) return;
    shownPath.current = pathname + hash;
    // A link to a part of a page (/billing/plans#redeem) lands on that part's first field.
    const part = hash === '' ? null : document.getElementById(hash.slice(1));
    if (part !== null) {
      part.scrollIntoView({ block: 'start' });
      part.querySelector<HTMLElement>('input, select, textarea, button')?.focus({ preventScroll: true });
      return;
    }
    window.scrollTo(0, 0);
    const heading = mainRef.current?.querySelector<HTMLElement>('h1');
    (heading ?? mainRef.current)?.focus({ preventScroll: true });
  }, [pathname, hash]);

  useEffect(() => setMenuOpen(false), [orgs?.version]);

  return (
    <div className="shell">
      <a
        className="skip-link"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          mainRef.current?.focus();
        }}
      >
        Skip to content
      </a>
      <header className="topbar">
        {/* An organisation adds a page to the bar, which then sits closer on a small laptop. */}
        <div className={orgs?.current ? 'topbar-inner has-org' : 'topbar-inner'}>
          <Link to={home} className="brand">
            <Logo />
            <span>lmgate</span>
          </Link>
          <button
            type="button"
            ref={menuButtonRef}
            className="button ghost small menu-button"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onClick={() => setMenuOpen((open) => !open)}
          >
            <span className="menu-icon" aria-hidden="true" />
            Menu
          </button>
          <nav
            aria-label="Main"
            id="main-nav"
            className={menuOpen ? 'nav open' : 'nav'}
            onKeyDown={(event) => {
              if (event.key !== 'Escape' || !menuOpen) return;
              setMenuOpen(false);
              menuButtonRef.current?.focus();
            }}
          >
            <ul>
              {orgs ? (
                <li className="nav-switcher">
                  <AccountSwitcher className="in-menu" />
                </li>
              ) : null}
              {shownPages.map((page) => (
                <li key={page.to}>
                  {/* Choosing the page already shown closes the menu too. */}
                  <NavLink to={page.to} end={page.to === home} onClick={() => setMenuOpen(false)}>
                    {page.label}
                  </NavLink>
                </li>
              ))}
              {other ? (
                <li className="nav-other">
                  <Link to={other.to}>{other.label}</Link>
                </li>
              ) : null}
            </ul>
          </nav>
          <div className="account-menu">
            {orgs ? <AccountSwitcher className="in-bar" other={other} /> : null}
            {other ? (
              <Link to={other.to} className="button ghost small account-other">
                {other.label}
              </Link>
            ) : null}
            {/* In the dashboard the switcher names who is signed in. */}
            {orgs ? null : (
              <span className="account-email" title={account?.email}>
                {account?.email}
              </span>
            )}
            <button
              type="button"
              className="button ghost small"
              disabled={signingOut}
              onClick={() => {
                setSigningOut(true);
                // Signed out, RequireSession shows the sign-in page.
                void signOut();
              }}
            >
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1} className="main">
        {/* Drawn afresh for the account a switch chose. */}
        <Outlet key={orgs?.version ?? 0} />
      </main>
    </div>
  );
}

/** The organisation's page, before Settings, while the dashboard acts for one. */
function withOrgPage(pages: readonly NavPage[]): readonly NavPage[] {
  const at = pages.findIndex((page) => page.to === '/settings');
  const org = { to: '/org', label: 'Organisation' };
  return at === -1 ? [...pages, org] : [...pages.slice(0, at), org, ...pages.slice(at)];
}
