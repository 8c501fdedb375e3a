// The API Keys page's form, in its dialogs: a new key's name and limits, or an existing
// key's (an edit sends only what changed).
import { useId, useState, type ChangeEvent, type FormEvent } from 'react';
import { api, ApiError } from '../../api';
import { TextField } from '../../components/TextField';
import { creditsInputToMicros, microsToCreditsInput } from '../../credit-input';
import type { ApiKey, CreatedKey, OneKey } from '../../types';

interface KeyFields {
  name: string;
  /** The last day the key works (YYYY-MM-DD, UTC), or ''. */
  expires: string;
  models: string;
  ips: string;
  rpm: string;
  /** Credits as typed, or '' for no limit. */
  creditLimit: string;
  creditPeriod: 'total' | 'month';
}

function fieldsOf(key: ApiKey | undefined): KeyFields {
  if (key === undefined) return { name: '', expires: '', models: '', ips: '', rpm: '', creditLimit: '', creditPeriod: 'month' };
  return {
    name: key.name,
    // Stored as the moment it stops working: the end of the day before.
    expires: key.expiresAt === null ? '' : new Date(Date.parse(key.expiresAt) - 1).toISOString().slice(0, 10),
    models: key.allowedModels?.join(', ') ?? '',
    ips: key.allowedIps?.join(', ') ?? '',
    rpm: key.rpm === null ? '' : String(key.rpm),
    creditLimit: key.creditLimitMicros === null ? '' : microsToCreditsInput(key.creditLimitMicros),
    creditPeriod: key.creditLimitPeriod ?? 'month',
  };
}

const listOf = (text: string): string[] => text.split(',').map((item) => item.trim()).filter((item) => item !== '');

/** Generates a key (no `apiKey`) or edits one: its name and limits. An edit sends only what changed. */
export function KeyForm({ apiKey, onSaved, onCancel }: { apiKey?: ApiKey; onSaved(key: ApiKey, secret: string): void; onCancel(): void }) {
  const initial = fieldsOf(apiKey);
  const [fields, setFields] = useState<KeyFields>(initial);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const periodId = useId();
  const set = (field: keyof KeyFields) => (e: ChangeEvent<HTMLInputElement | HTMLSelectElement>) => setFields((current) => ({ ...current, [field]: e.target.value }));
  const changed = (field: keyof KeyFields) => apiKey === undefined || fields[field] !== initial[field];

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    const body: Record<string, unknown> = {};
    if (changed('name')) body.name = fields.name.trim();
    if (changed('expires')) body.expiresAt = fields.expires === '' ? null : fields.expires;
    if (changed('models')) body.allowedModels = listOf(fields.models);
    if (changed('ips')) body.allowedIps = listOf(fields.ips);
    if (changed('rpm')) body.rpm = fields.rpm.trim() === '' ? null : Number(fields.rpm);
    if (changed('creditLimit') || changed('creditPeriod')) {
      const text = fields.creditLimit.trim();
      const micros = text === '' ? null : creditsInputToMicros(text, { signed: false });
      if (text !== '' && micros === null) {
        setError(new ApiError(422, 'Validation failed', { creditLimitMicros: 'Give an amount of credits, like 5 or 0.25 (at most 6 decimals).' }));
        return;
      }
      body.creditLimitMicros = micros;
      if (micros !== null) body.creditLimitPeriod = fields.creditPeriod;
    }
    setBusy(true);
    try {
      if (apiKey === undefined) {
        const created = await api<CreatedKey>('/keys', { method: 'POST', body });
        onSaved(created.key, created.secret);
      } else {
        const saved = await api<OneKey>(`/keys/${encodeURIComponent(apiKey.id)}`, { method: 'PATCH', body });
        onSaved(saved.key, '');
      }
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      setBusy(false);
    }
  }
  const fieldError = (name: string) => error?.fields[name];
  const formError = error !== undefined && Object.keys(error.fields).length === 0 ? error.message : undefined;

  return (
    <form onSubmit={submit} className="form">
      <TextField
        label="Key name"
        hint="Something to recognise it by, like the app or machine that uses it."
        required
        maxLength={100}
        value={fields.name}
        onChange={set('name')}
        error={fieldError('name') ?? formError}
      />
      <fieldset className="key-limits-fields">
        <legend>Limits (optional)</legend>
        <p className="field-hint">Each narrows what this key may do within your plan. Leave a field empty for no limit.</p>
        <div className="key-credit-limit">
          <TextField
            label="Credit limit"
            inputMode="decimal"
            hint="The most this key may spend, in credits; your balance still applies."
            value={fields.creditLimit}
            onChange={set('creditLimit')}
            error={fieldError('creditLimitMicros') ?? fieldError('creditLimitPeriod')}
          />
          <div className="field">
            <label htmlFor={periodId}>Credit limit applies</label>
            <select id={periodId} value={fields.creditPeriod} onChange={set('creditPeriod')}>
              <option value="month">Each month (UTC)</option>
              <option value="total">In total</option>
            </select>
          </div>
        </div>
        <TextField label="Expires after" type="date" hint="The last day (UTC) the key works." value={fields.expires} onChange={set('expires')} error={fieldError('expiresAt')} />
        <TextField
          label="Allowed models"
          hint="Model ids, separated by commas; * matches any characters (demo-*)."
          value={fields.models}
          onChange={set('models')}
          error={fieldError('allowedModels')}
        />
        <TextField
          label="Allowed IP addresses"
          hint="Addresses or CIDR ranges, IPv4 or IPv6, separated by commas (203.0.113.0/24, 2001:db8::/32)."
          value={fields.ips}
          onChange={set('ips')}
          error={fieldError('allowedIps')}
        />
        <TextField
          label="Requests per minute"
          type="number"
          min={1}
          step={1}
          hint="This key’s own limit; your plan’s limit still applies to all keys together."
          value={fields.rpm}
          onChange={set('rpm')}
          error={fieldError('rpm')}
        />
      </fieldset>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy || fields.name.trim() === ''}>
          {apiKey === undefined ? (busy ? 'Generating…' : 'Generate key') : busy ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}
