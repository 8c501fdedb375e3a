// The Webhooks page's form, in its dialog: the URL events are sent to and the event types
// it receives. The server checks both; its messages show beside the fields.
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../../api';
import { TextField } from '../../components/TextField';
import type { WebhookEndpoint, WebhookEndpointWithSecret } from '../../types';

/** What each event type tells, in a few words. */
export const EVENT_WORDS: Record<string, string> = {
  'balance.low': 'The balance fell below its alert threshold',
  'budget.threshold': 'Spending crossed a budget threshold',
  'payment.succeeded': 'A payment went through',
  'payment.failed': 'A payment failed',
  'key.revoked': 'An API key was revoked (leaks included)',
  'subscription.updated': 'The plan or subscription changed',
};

export function EndpointForm({ eventTypes, onSaved, onCancel }: { eventTypes: string[]; onSaved(endpoint: WebhookEndpoint, secret: string): void; onCancel(): void }) {
  const [url, setUrl] = useState('');
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  function toggle(type: string, on: boolean) {
    setChosen((current) => {
      const next = new Set(current);
      if (on) next.add(type);
      else next.delete(type);
      return next;
    });
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      // Sent in the page's order, whatever order they were ticked in.
      const created = await api<WebhookEndpointWithSecret>('/webhooks', { method: 'POST', body: { url: url.trim(), eventTypes: eventTypes.filter((type) => chosen.has(type)) } });
      onSaved(created.endpoint, created.secret);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      setBusy(false);
    }
  }
  const formError = error !== undefined && Object.keys(error.fields).length === 0 ? error.message : undefined;

  return (
    <form onSubmit={submit} className="form">
      <TextField
        label="Endpoint URL"
        type="url"
        hint="Where events are posted, such as https://example.com/webhooks/lmgate."
        required
        maxLength={2000}
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        error={error?.fields.url ?? formError}
      />
      <fieldset className="webhook-events-fields">
        <legend>Events to send</legend>
        {eventTypes.map((type) => (
          <label key={type} className="checkbox">
            <input type="checkbox" checked={chosen.has(type)} onChange={(e) => toggle(type, e.target.checked)} />
            <span>
              <code>{type}</code> <span className="muted">{EVENT_WORDS[type] ?? ''}</span>
            </span>
          </label>
        ))}
        {error?.fields.eventTypes === undefined ? null : <p className="field-error">{error.fields.eventTypes}</p>}
      </fieldset>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy || url.trim() === '' || chosen.size === 0}>
          {busy ? 'Adding…' : 'Add endpoint'}
        </button>
      </div>
    </form>
  );
}
