// The audit log: who did what, when and to what, with before and after, newest first.
import { useState } from 'react';
import { Link } from 'react-router';
import { LoadState } from '../components/LoadState';
import { PageHeader } from '../components/PageHeader';
import { formatDateTime } from '../format';
import { usePageTitle } from '../page-title';
import { useApiData } from '../use-api-data';
import { adminPath, type AuditPage } from './admin-api';

const PAGE_SIZE = 50;

export function AdminAuditPage() {
  usePageTitle('Audit log');
  // The ids each shown page started before; the first page starts at the newest.
  const [starts, setStarts] = useState<(number | null)[]>([null]);
  const before = starts[starts.length - 1];
  const page = useApiData<AuditPage>(adminPath(`/audit?limit=${PAGE_SIZE}${before === null || before === undefined ? '' : `&before_id=${before}`}`));

  return (
    <>
      <PageHeader title="Audit log" description="Every admin action, from the CLI, the admin API and this console, newest first." />
      {page.data === undefined ? (
        <LoadState error={page.error} onRetry={page.reload} />
      ) : (
        <section className="card flush" aria-label="Audit log">
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {page.data.entries.map((entry) => (
                <tr key={entry.id}>
                  <th scope="row" data-label="When">{formatDateTime(entry.created_at)}</th>
                  <td data-label="Who">
                    {entry.actor.kind === 'operator' ? <Link to={`/admin/accounts/${entry.actor.id}`}>operator</Link> : entry.actor.kind.replace('_', ' ')}{' '}
                    <code>{entry.actor.id}</code>
                  </td>
                  <td data-label="Action">
                    <code>{entry.action}</code>
                  </td>
                  <td data-label="Target">{entry.target.kind === 'account' ? <Link to={`/admin/accounts/${entry.target.id}`}>{entry.target.id}</Link> : <code>{entry.target.id}</code>}</td>
                  <td data-label="Change" className="audit-change">
                    {entry.before === null ? null : <div>before: {JSON.stringify(entry.before)}</div>}
                    {entry.after === null ? null : <div>after: {JSON.stringify(entry.after)}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="pager">
            <button type="button" className="button small" disabled={starts.length === 1} onClick={() => setStarts(starts.slice(0, -1))}>
              Newer
            </button>
            <button type="button" className="button small" disabled={page.data.next_before_id === null} onClick={() => setStarts([...starts, page.data!.next_before_id])}>
              Older
            </button>
          </div>
        </section>
      )}
    </>
  );
}
