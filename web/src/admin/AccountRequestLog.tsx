// An account's request log in the console: what its customer sees on their Request log,
// refusals included with their reason (a 422's with the fields it named), newest first, a
// page at a time, so an operator can see why a customer's calls fail.
import { useState } from 'react';
import { LoadState } from '../components/LoadState';
import { creditsColumn, formatDateTime, formatNumber, formatRefusalReason } from '../format';
import { useApiData } from '../use-api-data';
import { type AdminRequestLog } from './admin-api';

const PAGE_SIZE = 20;

export function AccountRequestLog({ base }: { base: string }) {
  const [outcome, setOutcome] = useState('');
  // The `before` each shown page started at; the first page starts at the newest.
  const [starts, setStarts] = useState<string[]>([]);
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (outcome !== '') params.set('outcome', outcome);
  const before = starts.at(-1);
  if (before !== undefined) params.set('before', before);
  const log = useApiData<AdminRequestLog>(`${base}/requests?${params}`);
  const requests = log.data?.requests ?? [];
  const cost = creditsColumn(requests.filter((entry) => !entry.refused).map((entry) => entry.cost_micros));

  return (
    <section className="card flush" aria-labelledby="requests-title">
      <div className="card-head inline">
        <h2 id="requests-title" className="card-title">
          Request log
        </h2>
        <div className="field compact">
          <label htmlFor="requests-outcome">Outcome</label>
          <select
            id="requests-outcome"
            value={outcome}
            onChange={(event) => {
              setOutcome(event.target.value);
              setStarts([]);
            }}
          >
            <option value="">All</option>
            <option value="succeeded">Succeeded</option>
            <option value="failed">Failed and refused</option>
          </select>
        </div>
      </div>
      {log.data === undefined ? (
        <LoadState error={log.error} onRetry={log.reload} />
      ) : requests.length === 0 ? (
        <p className="muted padded">No requests in the last {log.data.retention_days} days.</p>
      ) : (
        <table className="table stacked" data-testid="account-request-log">
          <caption className="visually-hidden">API requests of this account, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Key</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col" className="num">Tokens in / out</th>
              <th scope="col" className="num">Cost</th>
              <th scope="col">Request ID</th>
            </tr>
          </thead>
          <tbody>
            {requests.map((entry) => (
              <tr key={entry.id}>
                <td data-label="Time">{formatDateTime(entry.at)}</td>
                <td data-label="Key">{entry.key_name || <span className="muted">Unknown key</span>}</td>
                <td data-label="Model">{entry.model === null ? <span className="muted">—</span> : <code>{entry.model}</code>}</td>
                <td data-label="Status">
                  <span className={`badge ${entry.status < 400 ? 'success' : 'danger'}`}>{entry.status}</span> {entry.reason === null ? null : <span>{formatRefusalReason(entry.reason)}</span>}
                </td>
                <td data-label="Tokens in / out" className="num">
                  {entry.refused ? '—' : `${formatNumber(entry.prompt_tokens)} / ${formatNumber(entry.completion_tokens)}`}
                </td>
                <td data-label="Cost" className="num">
                  {entry.refused ? '—' : cost(entry.cost_micros)}
                </td>
                <td data-label="Request ID">
                  <code>{entry.request_id}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="pager">
        <button type="button" className="button small" disabled={starts.length === 0} onClick={() => setStarts(starts.slice(0, -1))}>
          Newer
        </button>
        <button type="button" className="button small" disabled={!log.data?.next} onClick={() => setStarts([...starts, log.data!.next!])}>
          Older
        </button>
      </div>
    </section>
  );
}
