// The organisation the dashboard acts for: its members and their roles, the invitations
// still open, and its monthly budgets against what was spent this month. Who may change
// what follows the caller's role; the server decides either way, and its refusal is shown.
import { Link } from 'react-router';
import { LoadState } from '../components/LoadState';
import { PageHeader } from '../components/PageHeader';
import { formatRole } from '../org-permissions';
import { useOrgs } from '../orgs';
import { usePageTitle } from '../page-title';
import type { OrgDetail } from '../types';
import { useApiData } from '../use-api-data';
import { AlertSettings } from './org/AlertSettings';
import { BudgetList } from './org/BudgetList';
import { Invitations } from './org/Invitations';
import { LeaveOrg } from './org/LeaveOrg';
import { MemberList } from './org/MemberList';

export function OrgPage() {
  usePageTitle('Organisation');
  const { current } = useOrgs();
  const detail = useApiData<OrgDetail>(current === null ? null : '/orgs/current');

  if (current === null) return <NoOrg />;
  const data = detail.data;
  return (
    <>
      <PageHeader
        title="Organisation"
        description={
          <>
            <strong className="org-name">{current.name}</strong> · you are {articleFor(current.role)} {formatRole(current.role).toLowerCase()}.
          </>
        }
        actions={<LeaveOrg orgName={current.name} />}
      />
      {data === undefined ? (
        <LoadState error={detail.error} onRetry={detail.reload} />
      ) : (
        <>
          <MemberList detail={data} onChange={(next) => detail.setData(() => next)} onRemoved={detail.reload} />
          <Invitations />
          <BudgetList detail={data} onChange={(next) => detail.setData(() => next)} />
          <AlertSettings org={current} />
        </>
      )}
    </>
  );
}

function articleFor(role: string): string {
  return role === 'owner' || role === 'admin' ? 'an' : 'a';
}

function NoOrg() {
  return (
    <>
      <PageHeader title="Organisation" />
      <div className="card empty">
        <h2 className="card-title">You are working in your personal account</h2>
        <p className="muted">
          Choose an organisation with the account switcher at the top, or make a new one there. Its members share one balance, each with their own
          keys. Your <Link to="/">overview</Link> is where you left it.
        </p>
      </div>
    </>
  );
}
