import { useState } from 'react';
import { Notice } from '../../components/Notice';
import { goToStripe } from './stripe-redirect';

/** A button that opens a Stripe page; it stays busy while the browser leaves. */
export function StripeButton({ label, path, body, primary = false }: { label: string; path: string; body?: unknown; primary?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function open() {
    setBusy(true);
    setError(null);
    try {
      await goToStripe(path, body);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  }

  return (
    <>
      {error === null ? null : <Notice tone="error">{error}</Notice>}
      <button type="button" className={`button ${primary ? 'primary' : ''}`} disabled={busy} onClick={() => void open()}>
        {busy ? 'Opening Stripe…' : label}
      </button>
    </>
  );
}
