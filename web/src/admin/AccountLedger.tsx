// An account's ledger in the console, newest first, a page at a time, its credits lined up
// on the decimal point.
import { useEffect, useState } from 'react';
import { LoadState } from '../components/LoadState';
import { creditsColumn, formatDateTime, formatLedgerKind } from '../format';
import { useApiData } from '../use-api-data';
import { type Ledger } from './admin-api';

const PAGE_SIZE = 20;

/** `version` changes when the account's credits did: the page is read again. */
export function AccountLedger({ base, version }: { base: string; version: number }) {
  // The before_id each shown page started at; the first page starts at the newest.
  const [starts, setStarts] = useState<number[]>([]);
  const before = starts.at(-1);
  const ledger = useApiData<Ledger>(`${base}/ledger?limit=${PAGE_SIZE}${before === undefined ? '' : `&before_id=${before}`}`);
  const { reload } = ledger;
  useEffect(() => {
    if (version > 0) reload();
  }, [version, reload]);
  const entries = ledger.data?.entries ?? [];
  const credits = creditsColumn(entries.map((entry) => entry.amount_micros));
  return (
    <section className="card flush" aria-labelledby="ledger-title">
      <h2 id="ledger-title" className="card-title padded">
        Ledger
      </h2>
      {ledger.data === undefined ? (
        <LoadState error={ledger.error} onRetry={ledger.reload} />
      ) : (
        <table className="table stacked">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col" className="num">Credits</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id}>
                <th scope="row" data-label="When">{formatDateTime(entry.created_at)}</th>
                <td data-label="Kind">{formatLedgerKind(entry.kind)}</td>
                <td data-label="Credits" className="num">{credits(entry.amount_micros)}</td>
                <td data-label="Reason">{entry.reason ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="pager">
        <button type="button" className="button small" disabled={starts.length === 0} onClick={() => setStarts(starts.slice(0, -1))}>
          Newer
        </button>
        <button type="button" className="button small" disabled={ledger.data?.next_before_id == null} onClick={() => setStarts([...starts, ledger.data!.next_before_id!])}>
          Older
        </button>
      </div>
    </section>
  );
}
