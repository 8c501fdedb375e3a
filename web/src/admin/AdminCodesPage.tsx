// Redemption codes: create (shown once) and the list of every code by its last characters.
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../api';
import { LoadState } from '../components/LoadState';
import { Notice } from '../components/Notice';
import { PageHeader } from '../components/PageHeader';
import { TextField } from '../components/TextField';
import { creditsColumn, formatDate, formatExpiry } from '../format';
import { usePageTitle } from '../page-title';
import { useApiData } from '../use-api-data';
import { adminPath, type CodeList, type CreatedCodes } from './admin-api';
import { creditsInputToMicros } from '../credit-input';

export function AdminCodesPage() {
  usePageTitle('Codes');
  const codes = useApiData<CodeList>(adminPath('/codes'));
  const [created, setCreated] = useState<string[]>([]);
  const credits = creditsColumn(codes.data?.codes.map((code) => code.amount_micros) ?? []);

  return (
    <>
      <PageHeader title="Codes" description="Redemption codes add credits when a customer enters one on the Billing page. Only their hashes are stored." />
      <CreateCodes
        onCreated={(newCodes) => {
          setCreated(newCodes);
          codes.reload();
        }}
      />
      {created.length === 0 ? null : (
        <Notice tone="warning">
          <strong>Copy {created.length === 1 ? 'this code' : 'these codes'} now; they cannot be shown again.</strong>
          <ul className="plain-list" data-testid="new-codes">
            {created.map((code) => (
              <li key={code}>
                <code>{code}</code>
              </li>
            ))}
          </ul>
        </Notice>
      )}
      {codes.data === undefined ? (
        <LoadState error={codes.error} onRetry={codes.reload} />
      ) : (
        <section className="card flush" aria-label="Codes">
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col" className="num">Credits</th>
                <th scope="col">Expires</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {codes.data.codes.map((code) => (
                <tr key={code.id}>
                  <th scope="row" data-label="Code">
                    <code>{code.hint ?? code.id}</code>
                  </th>
                  <td data-label="Credits" className="num">{credits(code.amount_micros)}</td>
                  <td data-label="Expires">{code.expires_at === null ? 'Never' : formatExpiry(code.expires_at)}</td>
                  <td data-label="Created">{formatDate(code.created_at)}</td>
                  <td data-label="State">
                    {code.redeemed_at !== null ? (
                      <span className="badge neutral">Redeemed {formatDate(code.redeemed_at)}</span>
                    ) : code.disabled_at !== null ? (
                      <span className="badge danger">Disabled</span>
                    ) : (
                      <span className="badge success">Open</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </>
  );
}

function CreateCodes({ onCreated }: { onCreated(codes: string[]): void }) {
  const [amount, setAmount] = useState('');
  const [count, setCount] = useState('1');
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const micros = creditsInputToMicros(amount, { signed: false });

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (micros === null) return;
    setBusy(true);
    setError(undefined);
    try {
      // A date means the code works through that whole UTC day.
      const body = { amount_micros: micros, count: Number(count), ...(expires === '' ? {} : { expires_at: `${expires}T23:59:59.999Z` }) };
      const answer = await api<CreatedCodes>(adminPath('/codes'), { method: 'POST', body });
      onCreated(answer.codes.map((c) => c.code));
      setAmount('');
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    }
    setBusy(false);
  }

  return (
    <form className="card form" onSubmit={submit} aria-label="Create codes">
      <div className="toolbar">
        <TextField label="Credits each" inputMode="decimal" required value={amount} onChange={(e) => setAmount(e.target.value)} error={amount !== '' && micros === null ? 'Enter an amount, such as 10.' : error?.fields.amount_micros} />
        <TextField label="How many" type="number" min={1} max={1000} required value={count} onChange={(e) => setCount(e.target.value)} error={error?.fields.count} />
        <TextField label="Expires after (optional)" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} error={error?.fields.expires_at} />
        <button type="submit" className="button primary" disabled={busy || micros === null}>
          {busy ? 'Creating…' : 'Create codes'}
        </button>
      </div>
      {error !== undefined && Object.keys(error.fields).length === 0 ? <Notice tone="error">{error.message}</Notice> : null}
    </form>
  );
}
