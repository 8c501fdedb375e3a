// One endpoint's deliveries, newest first: the event, its webhook-id, where it stands, and
// every attempt (time, status code, duration, error) behind a disclosure. "Send again"
// queues the event once more with the same webhook-id; "Refresh" reads the log again.
import { useState } from 'react';
import { api, ApiError } from '../../api';
import { LoadState } from '../../components/LoadState';
import { Notice } from '../../components/Notice';
import { formatDateTime, formatNumber } from '../../format';
import type { OneWebhookDelivery, WebhookDelivery, WebhookDeliveryList, WebhookEndpoint } from '../../types';
import { useApiData } from '../../use-api-data';

const STATUS_BADGE: Record<WebhookDelivery['status'], { tone: string; label: string }> = {
  pending: { tone: 'accent', label: 'Pending' },
  delivered: { tone: 'success', label: 'Delivered' },
  failed: { tone: 'danger', label: 'Failed' },
};

export function DeliveryLog({ endpoint }: { endpoint: WebhookEndpoint }) {
  const deliveries = useApiData<WebhookDeliveryList>(`/webhooks/${encodeURIComponent(endpoint.id)}/deliveries`);
  const [notice, setNotice] = useState<{ tone: 'success' | 'error'; text: string } | null>(null);

  async function sendAgain(delivery: WebhookDelivery) {
    setNotice(null);
    try {
      const answer = await api<OneWebhookDelivery>(`/webhooks/deliveries/${delivery.id}/retry`, { method: 'POST' });
      deliveries.setData((current) => ({ deliveries: [answer.delivery, ...(current?.deliveries ?? [])] }));
      setNotice({ tone: 'success', text: `The ${delivery.eventType} event will be sent again, with the same webhook-id.` });
    } catch (err) {
      setNotice({ tone: 'error', text: err instanceof ApiError ? err.message : String(err) });
    }
  }

  return (
    <section className="webhook-deliveries" aria-label={`Deliveries to ${endpoint.url}`}>
      <div className="webhook-deliveries-head">
        <h3 className="card-title">Deliveries</h3>
        <button type="button" className="button small" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      {notice === null ? null : <Notice tone={notice.tone}>{notice.text}</Notice>}
      {deliveries.data === undefined ? (
        <LoadState error={deliveries.error} onRetry={deliveries.reload} />
      ) : deliveries.data.deliveries.length === 0 ? (
        <p className="muted">Nothing sent yet. “Send test event” sends one now.</p>
      ) : (
        <table className="table stacked">
          <caption className="visually-hidden">Deliveries to {endpoint.url}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.deliveries.map((delivery) => (
              <tr key={delivery.id}>
                <th scope="row" data-label="Event">
                  <code>{delivery.eventType}</code>
                  <br />
                  <code className="muted webhook-id" title="webhook-id">
                    {delivery.eventId}
                  </code>
                </th>
                <td data-label="Created">{formatDateTime(delivery.createdAt)}</td>
                <td data-label="Status">
                  <span className={`badge ${STATUS_BADGE[delivery.status].tone}`}>{STATUS_BADGE[delivery.status].label}</span>
                  {delivery.nextAttemptAt === null || delivery.attempts === 0 ? null : <span className="muted"> next try {formatDateTime(delivery.nextAttemptAt)}</span>}
                </td>
                <td data-label="Attempts">
                  <Attempts delivery={delivery} />
                </td>
                <td className="actions">
                  {delivery.status === 'pending' ? null : (
                    <button type="button" className="button small" onClick={() => void sendAgain(delivery)}>
                      Send again<span className="visually-hidden"> {delivery.eventId}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Attempts({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.attemptLog.length === 0) return <span className="muted">None yet</span>;
  return (
    <details>
      <summary>{formatNumber(delivery.attempts)}</summary>
      <ol className="webhook-attempts">
        {delivery.attemptLog.map((attempt) => (
          <li key={attempt.attemptedAt}>
            {formatDateTime(attempt.attemptedAt)}: {attempt.statusCode === null ? 'no answer' : `HTTP ${attempt.statusCode}`} in {formatNumber(attempt.durationMs)} ms
            {attempt.error === null || attempt.statusCode !== null ? null : <span className="muted"> ({attempt.error})</span>}
          </li>
        ))}
      </ol>
    </details>
  );
}
