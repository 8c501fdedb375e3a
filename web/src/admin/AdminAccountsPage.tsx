// Accounts: a table searched by email, name or id, newest first or sorted as asked, a page
// of 25 at a time; and a new account, created from here.
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { Dialog } from '../components/Dialog';
import { LoadState } from '../components/LoadState';
import { PageHeader } from '../components/PageHeader';
import { creditsColumn, formatDate } from '../format';
import { CreateAccountForm } from './CreateAccountForm';
import { AccountTier } from './AccountTier';
import { usePageTitle } from '../page-title';
import { useApiData } from '../use-api-data';
import { adminPath, type AccountPage } from './admin-api';

const PAGE_SIZE = 25;

const SORTS = [
  ['newest', 'Newest first'],
  ['oldest', 'Oldest first'],
  ['email', 'Email, A to Z'],
  ['balance', 'Largest balance'],
] as const;

export function AdminAccountsPage() {
  usePageTitle('Accounts');
  const [typed, setTyped] = useState('');
  const [query, setQuery] = useState({ search: '', sort: 'newest', offset: 0 });
  const [creating, setCreating] = useState(false);
  const navigate = useNavigate();
  const params = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(query.offset), sort: query.sort });
  if (query.search !== '') params.set('search', query.search);
  const page = useApiData<AccountPage>(adminPath(`/accounts?${params}`));

  const balance = page.data === undefined ? undefined : creditsColumn(page.data.accounts.map((account) => account.balance_micros));

  function search(event: FormEvent) {
    event.preventDefault();
    setQuery({ ...query, search: typed.trim(), offset: 0 });
  }

  return (
    <>
      <PageHeader
        title="Accounts"
        description="Every account, newest first unless sorted otherwise. Search by part of an email or name, or a whole account id."
        actions={
          <button type="button" className="button primary" onClick={() => setCreating(true)}>
            New account
          </button>
        }
      />
      <Dialog open={creating} title="New account" onClose={() => setCreating(false)}>
        {creating ? <CreateAccountForm onCancel={() => setCreating(false)} onDone={(account) => void navigate(`/admin/accounts/${account.id}`)} /> : null}
      </Dialog>
      <form className="toolbar" role="search" onSubmit={search}>
        <div className="field compact">
          <label htmlFor="account-search">Search</label>
          <input id="account-search" type="search" value={typed} maxLength={320} onChange={(e) => setTyped(e.target.value)} />
        </div>
        <button type="submit" className="button primary">
          Search
        </button>
        <div className="field compact">
          <label htmlFor="account-sort">Sort</label>
          <select id="account-sort" value={query.sort} onChange={(e) => setQuery({ ...query, sort: e.target.value, offset: 0 })}>
            {SORTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </form>
      {page.data === undefined || balance === undefined ? (
        <LoadState error={page.error} onRetry={page.reload} />
      ) : (
        <section className="card flush" aria-label="Accounts">
          <table className="table stacked">
            <caption className="visually-hidden">Accounts</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Status</th>
                <th scope="col">Tier</th>
                <th scope="col" className="num">Balance</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {page.data.accounts.map((account) => (
                <tr key={account.id}>
                  <th scope="row" data-label="Email">
                    <Link to={`/admin/accounts/${account.id}`}>{account.email}</Link>{' '}
                    {account.role === 'operator' ? <span className="badge accent">operator</span> : null}
                  </th>
                  <td data-label="Status">
                    <span className={`badge ${account.status === 'active' ? 'success' : 'danger'}`}>{account.status}</span>
                  </td>
                  <td data-label="Tier">
                    <AccountTier account={account} />
                  </td>
                  <td data-label="Balance" className="num">
                    {balance(account.balance_micros)}
                  </td>
                  <td data-label="Created">{formatDate(account.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {page.data.accounts.length === 0 ? <p className="muted padded">No account matches.</p> : null}
          <div className="pager">
            <span className="muted">
              {page.data.total === 0 ? 'None' : `${query.offset + 1}–${query.offset + page.data.accounts.length} of ${page.data.total}`}
            </span>
            <span className="toolbar">
              <button type="button" className="button small" disabled={query.offset === 0} onClick={() => setQuery({ ...query, offset: Math.max(0, query.offset - PAGE_SIZE) })}>
                Previous
              </button>
              <button
                type="button"
                className="button small"
                disabled={query.offset + PAGE_SIZE >= page.data.total}
                onClick={() => setQuery({ ...query, offset: query.offset + PAGE_SIZE })}
              >
                Next
              </button>
            </span>
          </div>
        </section>
      )}
    </>
  );
}
