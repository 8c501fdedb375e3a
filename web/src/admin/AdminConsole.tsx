// The operator console's frame: its own pages in the dashboard's layout, for operators
// only (the admin API refuses anyone else anyway; this says so instead of failing).
import { Link } from 'react-router';
import { Layout, type NavPage } from '../components/Layout';
import { usePageTitle } from '../page-title';
import { useSession } from '../session';

const CONSOLE_PAGES: readonly NavPage[] = [
  { to: '/admin', label: 'Overview' },
  { to: '/admin/accounts', label: 'Accounts' },
  { to: '/admin/codes', label: 'Codes' },
  { to: '/admin/catalog', label: 'Models and tiers' },
  { to: '/admin/audit', label: 'Audit log' },
];

export function AdminConsole() {
  const { account } = useSession();
  if (account?.role !== 'operator') return <OperatorsOnly />;
  return <Layout pages={CONSOLE_PAGES} home="/admin" />;
}

function OperatorsOnly() {
  usePageTitle('Operators only');
  return (
    <main className="main">
      <h1>Operators only</h1>
      <p>
        The console is for the operators of this lmgate. Go back to your <Link to="/">dashboard</Link>.
      </p>
    </main>
  );
}
