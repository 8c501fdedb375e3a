// API keys: the list, "Generate New Key" with optional limits (the secret is shown once,
// in a dialog), "Edit" (name and limits) and "Revoke" after a confirmation.
import { useState } from 'react';
import { api } from '../api';
import { ConfirmAction } from '../components/ConfirmAction';
import { CopyButton } from '../components/CopyButton';
import { Dialog } from '../components/Dialog';
import { LeakedKeysNotice } from '../components/LeakedKeysNotice';
import { LoadState } from '../components/LoadState';
import { Notice } from '../components/Notice';
import { PageHeader } from '../components/PageHeader';
import { formatCredits, formatDate, formatDateTime, formatExpiry, formatNumber } from '../format';
import { usePageTitle } from '../page-title';
import type { ApiKey, KeyList, OneKey } from '../types';
import { useApiData } from '../use-api-data';
import { KeyForm } from './keys/KeyForm';

type Generation = { step: 'closed' } | { step: 'naming' } | { step: 'created'; key: ApiKey; secret: string };

export function KeysPage() {
  usePageTitle('API Keys');
  const keys = useApiData<KeyList>('/keys');
  const [generation, setGeneration] = useState<Generation>({ step: 'closed' });
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [editing, setEditing] = useState<ApiKey | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  function added(key: ApiKey, secret: string) {
    keys.setData((current) => ({ keys: [key, ...(current?.keys ?? []).filter((k) => k.id !== key.id)] }));
    setGeneration({ step: 'created', key, secret });
  }

  function edited(key: ApiKey) {
    keys.setData((current) => ({ keys: (current?.keys ?? []).map((k) => (k.id === key.id ? key : k)) }));
    setEditing(null);
    setNotice(`The key “${key.name}” was saved. Its limits apply to the next request.`);
  }

  function revoked(key: ApiKey) {
    keys.setData((current) => ({ keys: (current?.keys ?? []).map((k) => (k.id === key.id ? key : k)) }));
    setRevoking(null);
    setNotice(`The key “${key.name}” was revoked. Requests using it are refused from now on.`);
  }

  return (
    <>
      <PageHeader
        title="API Keys"
        description="Keys let your applications call the API. Keep them secret: anyone with a key can spend your credits."
        actions={
          <button
            type="button"
            className="button primary"
            onClick={() => {
              setNotice(null);
              setGeneration({ step: 'naming' });
            }}
          >
            Generate New Key
          </button>
        }
      />
      {notice === null ? null : <Notice tone="success">{notice}</Notice>}
      {keys.data === undefined ? null : <LeakedKeysNotice keys={keys.data.keys} />}
      {keys.data === undefined ? (
        <LoadState error={keys.error} onRetry={keys.reload} />
      ) : keys.data.keys.length === 0 ? (
        <div className="card empty">
          <h2 className="card-title">No keys yet</h2>
          <p className="muted">Generate a key to start calling the API.</p>
        </div>
      ) : (
        <KeyTable
          keys={keys.data.keys}
          onEdit={(key) => {
            setNotice(null);
            setEditing(key);
          }}
          onRevoke={setRevoking}
        />
      )}

      <Dialog open={generation.step !== 'closed'} title={generation.step === 'created' ? 'Your new API key' : 'Generate a new API key'} onClose={() => setGeneration({ step: 'closed' })}>
        {generation.step === 'naming' ? <KeyForm onSaved={added} onCancel={() => setGeneration({ step: 'closed' })} /> : null}
        {generation.step === 'created' ? <SecretOnce secret={generation.secret} name={generation.key.name} onDone={() => setGeneration({ step: 'closed' })} /> : null}
      </Dialog>

      <Dialog open={editing !== null} title="Edit API key" onClose={() => setEditing(null)}>
        {editing === null ? null : <KeyForm apiKey={editing} onSaved={edited} onCancel={() => setEditing(null)} />}
      </Dialog>

      <Dialog open={revoking !== null} title="Revoke this key?" tone="danger" onClose={() => setRevoking(null)}>
        {revoking === null ? null : <ConfirmRevoke apiKey={revoking} onRevoked={revoked} onCancel={() => setRevoking(null)} />}
      </Dialog>
    </>
  );
}

function KeyTable({ keys, onEdit, onRevoke }: { keys: ApiKey[]; onEdit(key: ApiKey): void; onRevoke(key: ApiKey): void }) {
  return (
    <div className="card flush">
      <table className="table stacked">
        <caption className="visually-hidden">Your API keys, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Limits</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} className={key.status === 'revoked' ? 'is-revoked' : undefined}>
              <th scope="row" data-label="Name" className="key-name">
                {key.name}
              </th>
              <td data-label="Key">
                <code className="key-mask">
                  {key.prefix}…{key.lastFour}
                </code>
              </td>
              <td data-label="Created">{formatDate(key.createdAt)}</td>
              <td data-label="Last used">{key.lastUsedAt === null ? <span className="muted">Never</span> : formatDateTime(key.lastUsedAt)}</td>
              <td data-label="Limits">
                <KeyLimits apiKey={key} />
              </td>
              <td data-label="Status">
                {key.status === 'active' && key.expired ? (
                  <span className="badge neutral">Expired</span>
                ) : key.status === 'active' ? (
                  <span className="badge success">Active</span>
                ) : (
                  <span className={`badge ${key.leaked ? 'danger' : 'neutral'}`} title={key.revokedAt === null ? undefined : `Revoked ${formatDateTime(key.revokedAt)}`}>
                    {key.leaked ? 'Revoked: leaked' : 'Revoked'}
                  </span>
                )}
              </td>
              <td className="actions">
                {key.status === 'active' ? (
                  <>
                    <button type="button" className="button small" onClick={() => onEdit(key)}>
                      Edit<span className="visually-hidden"> {key.name}</span>
                    </button>{' '}
                    <button type="button" className="button danger-outline small" onClick={() => onRevoke(key)}>
                      Revoke<span className="visually-hidden"> {key.name}</span>
                    </button>
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A key's limits in a few words, or "None". */
function KeyLimits({ apiKey }: { apiKey: ApiKey }) {
  const limits = [
    apiKey.expiresAt === null ? null : `${apiKey.expired ? 'Expired' : 'Expires'} ${formatExpiry(apiKey.expiresAt)}`,
    apiKey.allowedModels === null ? null : `Models: ${apiKey.allowedModels.join(', ')}`,
    apiKey.allowedIps === null ? null : `Addresses: ${apiKey.allowedIps.join(', ')}`,
    apiKey.rpm === null ? null : `${formatNumber(apiKey.rpm)} requests/min`,
    apiKey.creditLimitMicros === null ? null : creditLimitText(apiKey.creditLimitMicros, apiKey.creditLimitPeriod, apiKey.creditSpentMicros ?? 0),
  ].filter((limit) => limit !== null);
  if (limits.length === 0) return <span className="muted">None</span>;
  return (
    <ul className="key-limits">
      {limits.map((limit) => (
        <li key={limit}>{limit}</li>
      ))}
    </ul>
  );
}

/** "Credits: 0.0123 of 1.00 spent this month". */
function creditLimitText(limitMicros: number, period: ApiKey['creditLimitPeriod'], spentMicros: number): string {
  return `Credits: ${formatCredits(spentMicros)} of ${formatCredits(limitMicros)} spent ${period === 'month' ? 'this month (UTC)' : 'in total'}`;
}

function SecretOnce({ secret, name, onDone }: { secret: string; name: string; onDone(): void }) {
  return (
    <div className="form">
      <Notice tone="warning">
        <strong>Copy this key now.</strong> For your security it cannot be shown again. If you lose it, generate a new one.
      </Notice>
      <div className="field">
        <p className="label">
          Secret key for “{name}”
        </p>
        <div className="secret">
          <code className="secret-value" data-testid="new-key-secret">
            {secret}
          </code>
          <CopyButton text={secret} what="API key" autoFocus />
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

function ConfirmRevoke({ apiKey, onRevoked, onCancel }: { apiKey: ApiKey; onRevoked(key: ApiKey): void; onCancel(): void }) {
  async function revoke() {
    const answer = await api<OneKey>(`/keys/${encodeURIComponent(apiKey.id)}`, { method: 'DELETE' });
    onRevoked(answer.key);
  }

  return (
    <ConfirmAction label="Revoke key" busyLabel="Revoking…" tone="danger" action={revoke} onCancel={onCancel}>
      <p>
        <strong>{apiKey.name}</strong> (
        <code>
          {apiKey.prefix}…{apiKey.lastFour}
        </code>
        ) will stop working immediately: every application using it gets an error. This cannot be undone.
      </p>
    </ConfirmAction>
  );
}
