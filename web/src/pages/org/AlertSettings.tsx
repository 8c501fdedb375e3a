// When the organisation hears of its spending: an alert when the balance falls below an
// amount, and at shares of each monthly budget. Each crossing is told once, by webhook
// (Settings → Webhooks) and by mail to the owners and billing members. Owners and admins
// change them; everyone reads them.
import { useState, type FormEvent } from 'react';
import { api } from '../../api';
import { LoadState } from '../../components/LoadState';
import { Notice } from '../../components/Notice';
import { TextField } from '../../components/TextField';
import { creditsInputToMicros, microsToCreditsInput } from '../../credit-input';
import { formatCredits } from '../../format';
import { may } from '../../org-permissions';
import type { AlertSettings as Settings, OrgRef } from '../../types';
import { useApiData } from '../../use-api-data';

export function AlertSettings({ org }: { org: OrgRef }) {
  const settings = useApiData<Settings>('/alerts');
  return (
    <section className="card" aria-labelledby="alerts-title">
      <div className="card-head">
        <h2 id="alerts-title" className="card-title">
          Alerts
        </h2>
        <p className="muted">Each crossing is told once, by webhook and by mail to the owners and billing members; a top-up or a new month starts over.</p>
      </div>
      {settings.data === undefined ? (
        <LoadState error={settings.error} onRetry={settings.reload} />
      ) : may(org, 'budgets') ? (
        <AlertForm settings={settings.data} onSaved={(next) => settings.setData(() => next)} />
      ) : (
        <AlertSummary settings={settings.data} />
      )}
    </section>
  );
}

function AlertSummary({ settings }: { settings: Settings }) {
  return (
    <dl className="details" data-testid="alert-settings">
      <dt>Balance below</dt>
      <dd>{settings.balanceBelowMicros === null ? 'No alert' : `${formatCredits(settings.balanceBelowMicros)} credits`}</dd>
      <dt>Budget thresholds</dt>
      <dd>{settings.budgetThresholds.map((percent) => `${percent} %`).join(', ')}</dd>
    </dl>
  );
}

function AlertForm({ settings, onSaved }: { settings: Settings; onSaved(next: Settings): void }) {
  const [balance, setBalance] = useState(settings.balanceBelowMicros === null ? '' : microsToCreditsInput(settings.balanceBelowMicros));
  const [thresholds, setThresholds] = useState(settings.budgetThresholds.join(', '));
  const [error, setError] = useState<string | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const balanceMicros = balance.trim() === '' ? null : creditsInputToMicros(balance, { signed: false });
  const balanceInvalid = balance.trim() !== '' && balanceMicros === null;
  const percents = parsePercents(thresholds);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (balanceInvalid || percents === null) return;
    setBusy(true);
    setError(undefined);
    setSaved(false);
    try {
      onSaved(await api<Settings>('/alerts', { method: 'PUT', body: { balanceBelowMicros: balanceMicros, budgetThresholds: percents } }));
      setSaved(true);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="form" aria-label="Alerts" onSubmit={(event) => void submit(event)}>
      <TextField
        label="Alert when the balance falls below (credits)"
        inputMode="decimal"
        value={balance}
        onChange={(event) => setBalance(event.target.value)}
        hint="Empty: no balance alert."
        error={balanceInvalid ? 'A positive amount of credits, at most 6 decimals.' : undefined}
      />
      <TextField
        label="Alert at these shares of each budget (%)"
        value={thresholds}
        onChange={(event) => setThresholds(event.target.value)}
        hint="Whole percentages from 1 to 100, e.g. 50, 80, 100."
        error={percents === null ? 'Whole percentages from 1 to 100, separated by commas.' : undefined}
      />
      {error === undefined ? null : <Notice tone="error">{error}</Notice>}
      {saved ? <Notice tone="success">Alerts saved.</Notice> : null}
      <div>
        <button type="submit" className="button primary" disabled={busy || balanceInvalid || percents === null}>
          {busy ? 'Saving…' : 'Save alerts'}
        </button>
      </div>
    </form>
  );
}

/** "50, 80, 100" → [50, 80, 100]; null when any part is not a whole percentage from 1 to 100. */
function parsePercents(text: string): number[] | null {
  const parts = text.split(',').map((part) => part.trim()).filter((part) => part !== '');
  if (parts.length === 0 || parts.some((part) => !/^\d{1,3}$/.test(part) || Number(part) < 1 || Number(part) > 100)) return null;
  return [...new Set(parts.map(Number))].sort((a, b) => a - b);
}
