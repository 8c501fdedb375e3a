import type { ReactNode } from 'react';
import { Logo } from './Logo';

/** The centred card of the sign-in and sign-up pages. */
export function AuthLayout({ title, subtitle, children }: { title: string; subtitle?: string; children: ReactNode }) {
  return (
    <main className="auth" id="main">
      <div className="auth-card card">
        <div className="auth-brand">
          <Logo />
          <span>lmgate</span>
        </div>
        <h1>{title}</h1>
        {subtitle === undefined ? null : <p className="muted auth-subtitle">{subtitle}</p>}
        {children}
      </div>
    </main>
  );
}
