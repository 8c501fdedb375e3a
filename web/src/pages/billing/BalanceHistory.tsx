// Every change to the balance, newest first: grants, top-ups, refunds one line each, and
// the usage of a UTC day as one line with its number of requests. Older pages load below;
// a day cut by a page boundary continues on the same line.
import { useEffect, useState } from 'react';
import { api, ApiError } from '../../api';
import { LoadState } from '../../components/LoadState';
import { formatCredits, formatDateTime, formatDay, formatLedgerKind, formatNumber } from '../../format';
import type { BalanceHistory as History, HistoryEntry } from '../../types';

export function BalanceHistory({ version }: { version: number }) {
  const [entries, setEntries] = useState<HistoryEntry[] | undefined>(undefined);
  const [next, setNext] = useState<number | null>(null);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(false);

  async function load(before: number | null) {
    setLoading(true);
    setError(undefined);
    try {
      const page = await api<History>(`/history${before === null ? '' : `?before=${before}`}`);
      setEntries((shown) => (before === null || shown === undefined ? page.entries : joinPages(shown, page.entries)));
      setNext(page.next);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setLoading(false);
    }
  }

  useEffect(() => {
    void load(null);
  }, [version]);

  return (
    <section className="card flush section" aria-labelledby="ledger-title">
      <div className="card-head">
        <h2 id="ledger-title" className="card-title">
          History
        </h2>
        <p className="muted">Every change to your balance, newest first; usage adds up per day (UTC).</p>
      </div>
      {entries === undefined ? (
        <div className="card-body">
          <LoadState error={error} onRetry={() => void load(null)} />
        </div>
      ) : entries.length === 0 ? (
        <p className="muted empty-row">No changes yet.</p>
      ) : (
        <>
          <table className="table stacked" data-testid="ledger">
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Kind</th>
                <th scope="col">Description</th>
                <th scope="col" className="num">
                  Credits
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr key={entry.day === undefined ? entry.id : `usage-${entry.day}`}>
                  <td data-label="Date">{entry.day === undefined ? formatDateTime(entry.createdAt) : formatDay(entry.day)}</td>
                  <td data-label="Kind">
                    <span className="badge neutral">{formatLedgerKind(entry.kind)}</span>
                  </td>
                  <td data-label="Description">
                    {entry.charges === undefined
                      ? (entry.reason ?? <span className="muted">—</span>)
                      : `${formatNumber(entry.charges)} ${entry.charges === 1 ? 'request' : 'requests'}`}
                  </td>
                  <td data-label="Credits" className={`num amount ${entry.amountMicros < 0 ? 'debit' : 'credit'}`}>
                    {entry.amountMicros > 0 ? '+' : ''}
                    {formatCredits(entry.amountMicros)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {next === null ? null : (
            <div className="card-footer">
              <button type="button" className="button" disabled={loading} onClick={() => void load(next)}>
                {loading ? 'Loading…' : 'Show older'}
              </button>
            </div>
          )}
        </>
      )}
    </section>
  );
}

/** The older page after the shown one; a day's usage split between them becomes one line. */
function joinPages(shown: HistoryEntry[], older: HistoryEntry[]): HistoryEntry[] {
  const last = shown.at(-1);
  const [first, ...rest] = older;
  if (last?.day === undefined || first?.day !== last.day) return [...shown, ...older];
  const joined = { ...last, amountMicros: last.amountMicros + first.amountMicros, charges: (last.charges ?? 0) + (first.charges ?? 0) };
  return [...shown.slice(0, -1), joined, ...rest];
}
