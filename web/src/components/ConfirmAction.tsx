// The body of a confirmation dialog: what will happen, Cancel, and the button that does it,
// busy while the call runs and showing the server's message when it fails.
import { useState, type ReactNode } from 'react';
import { Notice } from './Notice';

export function ConfirmAction({
  children,
  label,
  busyLabel,
  tone,
  action,
  onCancel,
  disabled = false,
}: {
  children: ReactNode;
  label: string;
  busyLabel: string;
  tone: 'primary' | 'danger';
  /** Runs the change; a rejection's message is shown and the dialog stays open. */
  action(): Promise<void>;
  onCancel(): void;
  /** The input is not valid yet: nothing to confirm. */
  disabled?: boolean;
}) {
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  async function run() {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  }

  return (
    <div className="form">
      {children}
      {error === undefined ? null : <Notice tone="error">{error}</Notice>}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className={`button ${tone}`} disabled={busy || disabled} onClick={() => void run()}>
          {busy ? busyLabel : label}
        </button>
      </div>
    </div>
  );
}
