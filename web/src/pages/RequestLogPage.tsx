// The request log: every API request of the retention period, newest first, refused ones
// with their status and reason, so a failure is never invisible. Filters live in the
// address (?key&model&outcome, and ?member in an organisation); more pages load below.
import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../api';
import { LoadState } from '../components/LoadState';
import { MemberFilter } from '../components/MemberFilter';
import { PageHeader } from '../components/PageHeader';
import { TokenDetails } from '../components/TokenDetails';
import { creditsColumn, formatDateTime, formatNumber, formatRefusalReason } from '../format';
import { usePageTitle } from '../page-title';
import type { KeyList, RequestLog } from '../types';
import { useApiData } from '../use-api-data';

const PAGE_SIZE = 50;

export function RequestLogPage() {
  usePageTitle('Request log');
  const [params, setParams] = useSearchParams();
  const filters = { key: params.get('key') ?? '', model: params.get('model') ?? '', outcome: params.get('outcome') ?? '', member: params.get('member') ?? '' };
  const query = new URLSearchParams({ limit: String(PAGE_SIZE), ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== '')) }).toString();
  const first = useApiData<RequestLog>(`/requests?${query}`);
  const keys = useApiData<KeyList>('/keys');
  const [more, setMore] = useState<Pick<RequestLog, 'requests' | 'next'> | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  useEffect(() => setMore(null), [query]);

  function filter(name: keyof typeof filters, value: string) {
    const next = new URLSearchParams(params);
    if (value === '') next.delete(name);
    else next.set(name, value);
    setParams(next, { replace: true });
  }

  async function loadMore(before: string) {
    setLoadingMore(true);
    try {
      const page = await api<RequestLog>(`/requests?${query}&before=${encodeURIComponent(before)}`);
      setMore((current) => ({ requests: [...(current?.requests ?? []), ...page.requests], next: page.next }));
    } finally {
      setLoadingMore(false);
    }
  }

  const data = first.data;
  const requests = data === undefined ? [] : [...data.requests, ...(more?.requests ?? [])];
  const next = more === null ? data?.next : more.next;
  const cost = creditsColumn(requests.filter((entry) => !entry.refused).map((entry) => entry.costMicros));
  return (
    <>
      <PageHeader
        title="Request log"
        description={data === undefined ? 'Every API request, refused ones included.' : `Every API request of the last ${data.retentionDays} days, refused ones included.`}
      />
      <form className="card range" aria-label="Filter requests" onSubmit={(event) => event.preventDefault()}>
        <div className="range-dates">
          <div className="field">
            <label htmlFor="log-key">Key</label>
            <select id="log-key" value={filters.key} onChange={(event) => filter('key', event.target.value)}>
              <option value="">All keys</option>
              {(keys.data?.keys ?? []).map((key) => (
                <option key={key.id} value={key.id}>
                  {key.name} ({key.prefix}…{key.lastFour})
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="log-model">Model</label>
            <input id="log-model" type="search" value={filters.model} placeholder="Any model" onChange={(event) => filter('model', event.target.value.trim())} />
          </div>
          <div className="field">
            <label htmlFor="log-outcome">Outcome</label>
            <select id="log-outcome" value={filters.outcome} onChange={(event) => filter('outcome', event.target.value)}>
              <option value="">All</option>
              <option value="succeeded">Succeeded</option>
              <option value="failed">Failed</option>
            </select>
          </div>
          <MemberFilter id="log-member" value={filters.member} onChange={(memberId) => filter('member', memberId)} />
        </div>
      </form>
      {data === undefined ? (
        <LoadState error={first.error} onRetry={first.reload} />
      ) : requests.length === 0 ? (
        <div className="card empty">
          <h2 className="card-title">No requests</h2>
          <p className="muted">Requests made with your API keys appear here within a few seconds.</p>
        </div>
      ) : (
        <div className="card flush">
          <table className="table stacked" data-testid="request-log">
            <caption className="visually-hidden">API requests, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Key</th>
                <th scope="col">Model</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Tokens in / out
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col">Request ID</th>
              </tr>
            </thead>
            <tbody>
              {requests.map((entry) => (
                <tr key={entry.id}>
                  <td data-label="Time">{formatDateTime(entry.at)}</td>
                  <td data-label="Key">{entry.keyName || <span className="muted">Unknown key</span>}</td>
                  <td data-label="Model">{entry.model === null ? <span className="muted">—</span> : <code>{entry.model}</code>}</td>
                  <td data-label="Status">
                    <span className={`badge ${entry.status < 400 ? 'success' : 'danger'}`}>{entry.status}</span>{' '}
                    {entry.reason === null ? null : <span>{formatRefusalReason(entry.reason)}</span>}
                  </td>
                  <td data-label="Tokens in / out" className="num">
                    {entry.refused ? '—' : `${formatNumber(entry.promptTokens)} / ${formatNumber(entry.completionTokens)}`}
                    {entry.refused ? null : <TokenDetails {...entry} />}
                  </td>
                  <td data-label="Cost" className="num">
                    {entry.refused ? '—' : cost(entry.costMicros)}
                  </td>
                  <td data-label="Request ID">
                    <code>{entry.requestId}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {next ? (
            <div className="card-footer">
              <button type="button" className="button" disabled={loadingMore} onClick={() => void loadMore(next)}>
                {loadingMore ? 'Loading…' : 'Load more'}
              </button>
            </div>
          ) : null}
        </div>
      )}
    </>
  );
}
