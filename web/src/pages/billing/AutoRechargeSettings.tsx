// "When my balance falls below X, add Y": charged off-session to the card saved at the
// last top-up. A declined charge turns it off, and the server's notice says so here.
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../../api';
import { LoadState } from '../../components/LoadState';
import { Notice } from '../../components/Notice';
import { TextField } from '../../components/TextField';
import { MICROS_PER_CREDIT } from '../../format';
import type { AutoRecharge, EnabledPayments } from '../../types';
import { MoneyField } from './MoneyField';
import { useApiData } from '../../use-api-data';

export function AutoRechargeSettings({ payments }: { payments: EnabledPayments }) {
  const settings = useApiData<AutoRecharge>('/payments/auto-recharge');
  return (
    <section className="card" aria-labelledby="auto-recharge-title">
      <h2 id="auto-recharge-title" className="card-title">
        Auto-recharge
      </h2>
      {settings.data === undefined ? (
        <LoadState error={settings.error} onRetry={settings.reload} />
      ) : (
        <AutoRechargeForm settings={settings.data} payments={payments} onSaved={(saved) => settings.setData(() => saved)} />
      )}
    </section>
  );
}

function AutoRechargeForm({ settings, payments, onSaved }: { settings: AutoRecharge; payments: EnabledPayments; onSaved(saved: AutoRecharge): void }) {
  const { minorPerUnit } = payments;
  const [enabled, setEnabled] = useState(settings.enabled);
  const [threshold, setThreshold] = useState(String(settings.thresholdMicros / MICROS_PER_CREDIT));
  const [amount, setAmount] = useState(String(settings.amountMinor / minorPerUnit));
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ tone: 'success' | 'error'; text: string } | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setResult(null);
    setFields({});
    try {
      const body = { enabled, thresholdMicros: Math.round(Number(threshold) * MICROS_PER_CREDIT), amountMinor: Math.round(Number(amount) * minorPerUnit) };
      onSaved(await api<AutoRecharge>('/payments/auto-recharge', { method: 'PUT', body }));
      setResult({ tone: 'success', text: enabled ? 'Auto-recharge is on.' : 'Auto-recharge is off.' });
    } catch (err) {
      if (err instanceof ApiError) setFields(err.fields);
      setResult({ tone: 'error', text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="form">
      {settings.notice === null ? null : <Notice tone="warning">{settings.notice}</Notice>}
      <p className="muted">Charges the card you used for your last top-up when your balance runs low.</p>
      <label className="checkbox">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        Recharge automatically
      </label>
      <TextField
        label="When my balance falls below (credits)"
        name="threshold"
        type="number"
        inputMode="decimal"
        min={0}
        step="any"
        required
        value={threshold}
        onChange={(e) => setThreshold(e.target.value)}
        error={fields.thresholdMicros}
      />
      <MoneyField label="Add" name="recharge-amount" payments={payments} value={amount} onChange={setAmount} error={fields.amountMinor} />
      {result === null ? null : <Notice tone={result.tone}>{result.text}</Notice>}
      <div>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}
