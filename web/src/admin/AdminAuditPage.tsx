// The audit log: who did what, when and to what, newest first, in words: emails and key
// names rather than ids, each change as before → after with money in credits; the raw
// record (ids, JSON in micro-credits) one click away.
import { useState } from 'react';
import { Link } from 'react-router';
import { LoadState } from '../components/LoadState';
import { PageHeader } from '../components/PageHeader';
import { formatDateTime } from '../format';
import { usePageTitle } from '../page-title';
import { useApiData } from '../use-api-data';
import { adminPath, type AdminAuditEntry, type AuditPage } from './admin-api';
import { auditChanges, formatAuditAction } from './audit-words';

const PAGE_SIZE = 50;

const ACTOR_KINDS: Record<string, string> = { cli: 'CLI', admin_key: 'Admin key', operator: 'Operator' };

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
                    <Actor actor={entry.actor} />
                  </td>
                  <td data-label="Action">{formatAuditAction(entry.action)}</td>
                  <td data-label="Target">
                    <Target target={entry.target} />
                  </td>
                  <td data-label="Change" className="audit-change">
                    <Change entry={entry} />
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

function Actor({ actor }: { actor: AdminAuditEntry['actor'] }) {
  const kind = ACTOR_KINDS[actor.kind] ?? actor.kind;
  if (actor.kind === 'operator') return <Link to={`/admin/accounts/${actor.id}`}>{actor.name ?? actor.id}</Link>;
  return <>{actor.name === null ? kind : `${kind} “${actor.name}”`}</>;
}

function Target({ target }: { target: AdminAuditEntry['target'] }) {
  if (target.kind === 'account') return <Link to={`/admin/accounts/${target.id}`}>{target.name ?? target.id}</Link>;
  if (target.kind === 'key') return <>Key “{target.name ?? target.id}”</>;
  if (target.kind === 'admin_key') return <>Admin key “{target.name ?? target.id}”</>;
  return <code>{target.id}</code>;
}

function Change({ entry }: { entry: AdminAuditEntry }) {
  const changes = auditChanges(entry.before, entry.after);
  return (
    <>
      {changes.length === 0 ? null : (
        <ul className="plain-list">
          {changes.map((change) => (
            <li key={change.field}>
              {change.field}: {change.before === null ? change.after : change.after === null ? `${change.before} → removed` : `${change.before} → ${change.after}`}
            </li>
          ))}
        </ul>
      )}
      <details className="audit-raw">
        <summary>Raw record</summary>
        <pre>{JSON.stringify({ id: entry.id, actor: entry.actor, action: entry.action, target: entry.target, before: entry.before, after: entry.after }, null, 2)}</pre>
      </details>
    </>
  );
}
