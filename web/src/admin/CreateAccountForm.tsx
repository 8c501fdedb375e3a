// Creating an account from the console: email, name, tier and starting credits, through
// the admin API (commands.accounts.create, audited). The customer sets a password with
// "Forgot password", or the operator sets one on the account's page.
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../api';
import { LoadState } from '../components/LoadState';
import { Notice } from '../components/Notice';
import { TextField } from '../components/TextField';
import { creditsInputToMicros } from '../credit-input';
import { formatPlanName } from '../format';
import { useApiData } from '../use-api-data';
import { adminPath, type Catalog, type OneAccount } from './admin-api';

export function CreateAccountForm({ onDone, onCancel }: { onDone(account: OneAccount['account']): void; onCancel(): void }) {
  const catalog = useApiData<Catalog>(adminPath('/catalog'));
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [tier, setTier] = useState<string | null>(null);
  const [credits, setCredits] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const micros = credits.trim() === '' ? 0 : creditsInputToMicros(credits, { signed: false });

  if (catalog.data === undefined) return <LoadState error={catalog.error} onRetry={catalog.reload} />;
  const chosenTier = tier ?? catalog.data.default_tier;

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (micros === null) return;
    setBusy(true);
    setError(undefined);
    try {
      const created = await api<OneAccount>(adminPath('/accounts'), { method: 'POST', body: { email: email.trim(), name: name.trim() || null, tier: chosenTier, ...(micros > 0 ? { credits_micros: micros } : {}) } });
      onDone(created.account);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="form">
      <TextField label="Email" type="email" required maxLength={320} value={email} onChange={(e) => setEmail(e.target.value)} error={error?.fields.email} />
      <TextField label="Name" hint="Optional." maxLength={200} value={name} onChange={(e) => setName(e.target.value)} error={error?.fields.name} />
      <div className="field">
        <label htmlFor="new-account-tier">Tier</label>
        <select id="new-account-tier" value={chosenTier} onChange={(e) => setTier(e.target.value)}>
          {catalog.data.tiers.map((t) => (
            <option key={t.name} value={t.name}>
              {formatPlanName(t.name)}
              {t.subscription ? ' (needs a subscription)' : ''}
            </option>
          ))}
        </select>
      </div>
      <TextField
        label="Starting credits"
        hint="Optional; kept in the ledger as initial credits."
        inputMode="decimal"
        value={credits}
        onChange={(e) => setCredits(e.target.value)}
        error={micros === null ? 'Enter an amount of credits, such as 5 or 2.5.' : error?.fields.credits_micros}
      />
      <p className="muted">The customer sets a password with “Forgot password” on the sign-in page, or you set one on the account’s page.</p>
      {error !== undefined && Object.keys(error.fields).length === 0 ? <Notice tone="error">{error.message}</Notice> : null}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy || micros === null || email.trim() === ''}>
          {busy ? 'Creating…' : 'Create account'}
        </button>
      </div>
    </form>
  );
}
