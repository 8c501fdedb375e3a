// Setting, changing or removing one monthly budget, in credits.
import { useState, type FormEvent } from 'react';
import { api } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Notice } from '../../components/Notice';
import { TextField } from '../../components/TextField';
import { creditsInputToMicros, microsToCreditsInput } from '../../credit-input';
import type { OrgBudget, OrgDetail } from '../../types';

/** Whose budget (memberId null: the organisation's), as the list names it. */
export interface BudgetTarget {
  memberId: string | null;
  label: string;
  budget: OrgBudget | undefined;
}

export function BudgetDialog({ target, onClose, onSaved }: { target: BudgetTarget | null; onClose(): void; onSaved(detail: OrgDetail): void }) {
  return (
    <Dialog open={target !== null} title={target === null ? 'Monthly budget' : `Monthly budget: ${target.label}`} onClose={onClose}>
      {target === null ? null : <BudgetForm target={target} onClose={onClose} onSaved={onSaved} />}
    </Dialog>
  );
}

function BudgetForm({ target, onClose, onSaved }: { target: BudgetTarget; onClose(): void; onSaved(detail: OrgDetail): void }) {
  const [text, setText] = useState(target.budget === undefined ? '' : microsToCreditsInput(target.budget.monthlyMicros));
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const micros = creditsInputToMicros(text, { signed: false });

  async function save(monthlyMicros: number | null) {
    setBusy(true);
    setError(undefined);
    try {
      onSaved(await api<OrgDetail>('/orgs/current/budgets', { method: 'PUT', body: { memberId: target.memberId, monthlyMicros } }));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (micros !== null) void save(micros);
  }

  return (
    <form className="form" onSubmit={submit}>
      <TextField
        label="Credits a month"
        inputMode="decimal"
        value={text}
        autoFocus
        onChange={(event) => setText(event.target.value)}
        hint="Counted from the first of each month (UTC)."
        error={text.trim() !== '' && micros === null ? 'A positive amount of credits, at most 6 decimals.' : undefined}
      />
      {error === undefined ? null : <Notice tone="error">{error}</Notice>}
      <div className="dialog-actions">
        {target.budget === undefined ? null : (
          <button type="button" className="button danger-outline" disabled={busy} onClick={() => void save(null)}>
            Remove budget
          </button>
        )}
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy || micros === null}>
          {busy ? 'Saving…' : 'Save budget'}
        </button>
      </div>
    </form>
  );
}
