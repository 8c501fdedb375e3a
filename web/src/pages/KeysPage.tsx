// API keys: the list, "Generate New Key" (the secret is shown once, in a dialog), and
// "Revoke" after a confirmation.
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../api';
import { ConfirmAction } from '../components/ConfirmAction';
import { CopyButton } from '../components/CopyButton';
import { Dialog } from '../components/Dialog';
import { LeakedKeysNotice } from '../components/LeakedKeysNotice';
import { LoadState } from '../components/LoadState';
import { Notice } from '../components/Notice';
import { PageHeader } from '../components/PageHeader';
import { TextField } from '../components/TextField';
import { formatDate, formatDateTime } from '../format';
import { usePageTitle } from '../page-title';
import type { ApiKey } from '../types';
import { useApiData } from '../use-api-data';

type Generation = { step: 'closed' } | { step: 'naming' } | { step: 'created'; key: ApiKey; secret: string };

export function KeysPage() {
  usePageTitle('API Keys');
  const keys = useApiData<{ keys: ApiKey[] }>('/keys');
  const [generation, setGeneration] = useState<Generation>({ step: 'closed' });
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  function added(key: ApiKey, secret: string) {
    keys.setData((current) => ({ keys: [key, ...(current?.keys ?? []).filter((k) => k.id !== key.id)] }));
    setGeneration({ step: 'created', key, secret });
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
        <KeyTable keys={keys.data.keys} onRevoke={setRevoking} />
      )}

      <Dialog open={generation.step !== 'closed'} title={generation.step === 'created' ? 'Your new API key' : 'Generate a new API key'} onClose={() => setGeneration({ step: 'closed' })}>
        {generation.step === 'naming' ? <NameKeyForm onCreated={added} onCancel={() => setGeneration({ step: 'closed' })} /> : null}
        {generation.step === 'created' ? <SecretOnce secret={generation.secret} name={generation.key.name} onDone={() => setGeneration({ step: 'closed' })} /> : null}
      </Dialog>

      <Dialog open={revoking !== null} title="Revoke this key?" tone="danger" onClose={() => setRevoking(null)}>
        {revoking === null ? null : <ConfirmRevoke apiKey={revoking} onRevoked={revoked} onCancel={() => setRevoking(null)} />}
      </Dialog>
    </>
  );
}

function KeyTable({ keys, onRevoke }: { keys: ApiKey[]; onRevoke(key: ApiKey): void }) {
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
              <td data-label="Status">
                {key.status === 'active' ? (
                  <span className="badge success">Active</span>
                ) : (
                  <span className={`badge ${key.leaked ? 'danger' : 'neutral'}`} title={key.revokedAt === null ? undefined : `Revoked ${formatDateTime(key.revokedAt)}`}>
                    {key.leaked ? 'Revoked: leaked' : 'Revoked'}
                  </span>
                )}
              </td>
              <td className="actions">
                {key.status === 'active' ? (
                  <button type="button" className="button danger-outline small" onClick={() => onRevoke(key)}>
                    Revoke<span className="visually-hidden"> {key.name}</span>
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NameKeyForm({ onCreated, onCancel }: { onCreated(key: ApiKey, secret: string): void; onCancel(): void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api<{ key: ApiKey; secret: string }>('/keys', { method: 'POST', body: { name: name.trim() } });
      onCreated(created.key, created.secret);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="form">
      <TextField
        label="Key name"
        hint="Something to recognise it by, like the app or machine that uses it."
        required
        maxLength={100}
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={error?.fields.name ?? (error === undefined ? undefined : error.message)}
      />
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy || name.trim() === ''}>
          {busy ? 'Generating…' : 'Generate key'}
        </button>
      </div>
    </form>
  );
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
    const answer = await api<{ key: ApiKey }>(`/keys/${encodeURIComponent(apiKey.id)}`, { method: 'DELETE' });
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
