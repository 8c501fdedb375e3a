// The frame of every signed-in page: the top bar with the pages and sign-out, and the
// page itself. After a navigation, focus moves to the new page's heading so screen
// readers announce it and Tab starts from the page.
import { useEffect, useRef, useState } from 'react';
import { Link, NavLink, Outlet, useLocation } from 'react-router';
import { useSession } from '../session';
import { Logo } from './Logo';

const PAGES = [
  { to: '/', label: 'Overview' },
  { to: '/keys', label: 'API Keys' },
  { to: '/usage', label: 'Usage' },
  { to: '/models', label: 'Models' },
  { to: '/billing/plans', label: 'Billing' },
  { to: '/settings', label: 'Settings' },
] as const;

export function Layout() {
  const { account, signOut } = useSession();
  const { pathname } = useLocation();
  const mainRef = useRef<HTMLElement>(null);
  const shownPath = useRef(pathname);
  const [signingOut, setSigningOut] = useState(false);

  useEffect(() => {
    if (shownPath.current === pathname) return;
    shownPath.current = pathname;
    const heading = mainRef.current?.querySelector<HTMLElement>('h1');
    (heading ?? mainRef.current)?.focus();
  }, [pathname]);

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
        <div className="topbar-inner">
          <Link to="/" className="brand">
            <Logo />
            <span>lmgate</span>
          </Link>
          <nav aria-label="Main" className="nav">
            <ul>
              {PAGES.map((page) => (
                <li key={page.to}>
                  <NavLink to={page.to} end={page.to === '/'}>
                    {page.label}
                  </NavLink>
                </li>
              ))}
            </ul>
          </nav>
          <div className="account-menu">
            <span className="account-email" title={account?.email}>
              {account?.email}
            </span>
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
        <Outlet />
      </main>
    </div>
  );
}
