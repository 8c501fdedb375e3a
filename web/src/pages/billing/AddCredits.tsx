// Adding credits: a preset or a custom amount within the operator's bounds, paid on
// Stripe's Checkout page. The credits arrive later, from Stripe's webhook.
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api';
import { Notice } from '../../components/Notice';
import { formatCredits, formatMoney } from '../../format';
import type { EnabledPayments } from '../../types';
import { MoneyField } from './MoneyField';
import { goToStripe } from './stripe-redirect';

export function AddCredits({ payments }: { payments: EnabledPayments }) {
  const { currency, minorPerUnit, presetsMinor, minMinor, maxMinor } = payments;
  const [amount, setAmount] = useState(presetsMinor[0] === undefined ? '' : String(presetsMinor[0] / minorPerUnit));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const amountMinor = Math.round(Number(amount) * minorPerUnit);
  const valid = amount.trim() !== '' && Number.isFinite(amountMinor) && amountMinor >= minMinor && amountMinor <= maxMinor;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await goToStripe('/payments/top-up', { amountMinor });
    } catch (err) {
      setError(err instanceof ApiError ? (err.fields.amountMinor ?? err.message) : String(err));
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="add-credits-title">
      <h2 id="add-credits-title" className="card-title">
        Add credits
      </h2>
      <form onSubmit={submit} className="form">
        <div className="amount-presets" role="group" aria-label="Amount presets">
          {presetsMinor.map((preset) => (
            <button
              key={preset}
              type="button"
              className={`button small ${preset === amountMinor ? 'is-active' : ''}`}
              aria-pressed={preset === amountMinor}
              onClick={() => setAmount(String(preset / minorPerUnit))}
            >
              {formatMoney(preset, currency)}
            </button>
          ))}
        </div>
        <MoneyField
          label="Amount"
          name="amount"
          payments={payments}
          value={amount}
          onChange={setAmount}
          hint={valid ? `Adds ${formatCredits(creditsOf(amountMinor, payments))} credits.` : undefined}
        />
        {error === null ? null : <Notice tone="error">{error}</Notice>}
        <div>
          <button type="submit" className="button primary" disabled={busy || !valid}>
            {busy ? 'Opening Stripe…' : valid ? `Pay ${formatMoney(amountMinor, currency)}` : 'Pay'}
          </button>
        </div>
      </form>
    </section>
  );
}

/** As the server counts: rounded down to a micro-credit. */
function creditsOf(amountMinor: number, { creditsMicrosPerUnit, minorPerUnit }: EnabledPayments): number {
  return Math.floor((amountMinor * creditsMicrosPerUnit) / minorPerUnit);
}
