import type { ReactNode } from 'react';

/** Errors interrupt (role=alert); confirmations and hints are announced politely. */
export function Notice({ tone, children }: { tone: 'error' | 'success' | 'info' | 'warning'; children: ReactNode }) {
  return (
    <div className={`notice ${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}
