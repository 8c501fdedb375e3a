// Webhooks: the account's endpoints, each with the events it receives, "Send test event",
// "Rotate secret" (the old secret signs beside the new one for 24 hours) and "Remove";
// "Add endpoint" shows the signing secret once, in a dialog; each endpoint's deliveries
// with every attempt open beneath it.
import { useState } from 'react';
import { api, ApiError } from '../api';
import { ConfirmAction } from '../components/ConfirmAction';
import { CopyButton } from '../components/CopyButton';
import { Dialog } from '../components/Dialog';
import { LoadState } from '../components/LoadState';
import { Notice } from '../components/Notice';
import { PageHeader } from '../components/PageHeader';
import { formatDate, formatDateTime } from '../format';
import { usePageTitle } from '../page-title';
import type { OneWebhookEndpoint, WebhookEndpoint, WebhookEndpointList, WebhookEndpointWithSecret, WebhookTestSent } from '../types';
import { useApiData } from '../use-api-data';
import { DeliveryLog } from './webhooks/DeliveryLog';
import { EndpointForm } from './webhooks/EndpointForm';

type Secret = { endpoint: WebhookEndpoint; secret: string; rotated: boolean };
type Dialogs = { step: 'closed' } | { step: 'adding' } | { step: 'secret'; shown: Secret } | { step: 'rotating'; endpoint: WebhookEndpoint } | { step: 'removing'; endpoint: WebhookEndpoint };

export function WebhooksPage() {
  usePageTitle('Webhooks');
  const list = useApiData<WebhookEndpointList>('/webhooks');
  const [dialog, setDialog] = useState<Dialogs>({ step: 'closed' });
  const [notice, setNotice] = useState<{ tone: 'success' | 'error'; text: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const close = () => setDialog({ step: 'closed' });

  function replace(endpoint: WebhookEndpoint) {
    list.setData((current) => current && { ...current, endpoints: [...current.endpoints.filter((e) => e.id !== endpoint.id), endpoint].sort((a, b) => a.createdAt.localeCompare(b.createdAt)) });
  }

  async function sendTest(endpoint: WebhookEndpoint) {
    setNotice(null);
    try {
      const sent = await api<WebhookTestSent>(`/webhooks/${encodeURIComponent(endpoint.id)}/test`, { method: 'POST' });
      setNotice({ tone: 'success', text: `A webhook.test event (${sent.eventId}) is on its way to ${endpoint.url}.` });
      setOpen(endpoint.id);
    } catch (err) {
      setNotice({ tone: 'error', text: err instanceof ApiError ? err.message : String(err) });
    }
  }

  return (
    <>
      <PageHeader
        title="Webhooks"
        description="lmgate posts events to your endpoints as they happen, signed as Standard Webhooks specifies, and retries a failed delivery for a day."
        actions={
          <button
            type="button"
            className="button primary"
            disabled={list.data === undefined}
            onClick={() => {
              setNotice(null);
              setDialog({ step: 'adding' });
            }}
          >
            Add endpoint
          </button>
        }
      />
      {notice === null ? null : <Notice tone={notice.tone}>{notice.text}</Notice>}
      {list.data === undefined ? (
        <LoadState error={list.error} onRetry={list.reload} />
      ) : list.data.endpoints.length === 0 ? (
        <div className="card empty">
          <h2 className="card-title">No endpoints yet</h2>
          <p className="muted">Add an endpoint to hear of payments, revoked keys, low balances and plan changes as they happen.</p>
        </div>
      ) : (
        list.data.endpoints.map((endpoint) => (
          <div key={endpoint.id} className="card webhook-endpoint">
            <div className="webhook-endpoint-head">
              <div>
                <h2 className="card-title">
                  <code>{endpoint.url}</code>
                </h2>
                <p className="muted">
                  Added {formatDate(endpoint.createdAt)} · {endpoint.eventTypes.map((type) => <code key={type}>{type} </code>)}
                </p>
                {endpoint.previousSecretUntil === null || Date.parse(endpoint.previousSecretUntil) < Date.now() ? null : (
                  <p className="muted">The previous secret still signs beside the new one until {formatDateTime(endpoint.previousSecretUntil)}.</p>
                )}
              </div>
              <div className="page-actions">
                <button type="button" className="button small" onClick={() => void sendTest(endpoint)}>
                  Send test event
                </button>
                <button type="button" className="button small" onClick={() => setOpen(open === endpoint.id ? null : endpoint.id)} aria-expanded={open === endpoint.id}>
                  {open === endpoint.id ? 'Hide deliveries' : 'Deliveries'}
                </button>
                <button type="button" className="button small" onClick={() => setDialog({ step: 'rotating', endpoint })}>
                  Rotate secret
                </button>
                <button type="button" className="button danger-outline small" onClick={() => setDialog({ step: 'removing', endpoint })}>
                  Remove<span className="visually-hidden"> {endpoint.url}</span>
                </button>
              </div>
            </div>
            {open === endpoint.id ? <DeliveryLog endpoint={endpoint} /> : null}
          </div>
        ))
      )}

      <Dialog open={dialog.step === 'adding' || dialog.step === 'secret'} title={dialog.step === 'secret' ? 'Your signing secret' : 'Add a webhook endpoint'} onClose={close}>
        {dialog.step === 'adding' && list.data !== undefined ? (
          <EndpointForm
            eventTypes={list.data.eventTypes}
            onSaved={(endpoint, secret) => {
              replace(endpoint);
              setDialog({ step: 'secret', shown: { endpoint, secret, rotated: false } });
            }}
            onCancel={close}
          />
        ) : null}
        {dialog.step === 'secret' ? <SecretOnce shown={dialog.shown} onDone={close} /> : null}
      </Dialog>

      <Dialog open={dialog.step === 'rotating'} title="Rotate the signing secret?" onClose={close}>
        {dialog.step === 'rotating' ? (
          <ConfirmAction
            label="Rotate secret"
            busyLabel="Rotating…"
            tone="primary"
            action={async () => {
              const answer = await api<WebhookEndpointWithSecret>(`/webhooks/${encodeURIComponent(dialog.endpoint.id)}/rotate`, { method: 'POST' });
              replace(answer.endpoint);
              setDialog({ step: 'secret', shown: { ...answer, rotated: true } });
            }}
            onCancel={close}
          >
            <p>
              A new secret signs every delivery to <code>{dialog.endpoint.url}</code>. For 24 hours the current one signs beside it, so your receiver can switch over without
              missing an event.
            </p>
          </ConfirmAction>
        ) : null}
      </Dialog>

      <Dialog open={dialog.step === 'removing'} title="Remove this endpoint?" tone="danger" onClose={close}>
        {dialog.step === 'removing' ? (
          <ConfirmAction
            label="Remove endpoint"
            busyLabel="Removing…"
            tone="danger"
            action={async () => {
              const answer = await api<OneWebhookEndpoint>(`/webhooks/${encodeURIComponent(dialog.endpoint.id)}`, { method: 'DELETE' });
              list.setData((current) => current && { ...current, endpoints: current.endpoints.filter((e) => e.id !== answer.endpoint.id) });
              setNotice({ tone: 'success', text: `${answer.endpoint.url} receives no more events.` });
              close();
            }}
            onCancel={close}
          >
            <p>
              <code>{dialog.endpoint.url}</code> will receive nothing more, and deliveries waiting for it are dropped. This cannot be undone.
            </p>
          </ConfirmAction>
        ) : null}
      </Dialog>
    </>
  );
}

function SecretOnce({ shown, onDone }: { shown: Secret; onDone(): void }) {
  return (
    <div className="form">
      <Notice tone="warning">
        <strong>Copy this secret now.</strong> It cannot be shown again. Your receiver verifies each delivery’s <code>webhook-signature</code> with it.
        {shown.rotated ? ' The previous secret keeps signing beside it for 24 hours.' : ''}
      </Notice>
      <div className="field">
        <p className="label">Signing secret for {shown.endpoint.url}</p>
        <div className="secret">
          <code className="secret-value" data-testid="new-webhook-secret">
            {shown.secret}
          </code>
          <CopyButton text={shown.secret} what="signing secret" autoFocus />
        </div>
      </div>
      <div className="dialog-actions">
        <button type="button" className="button primary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
