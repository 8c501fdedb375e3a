import { Link } from 'react-router';
import { PageHeader } from '../components/PageHeader';
import { usePageTitle } from '../page-title';

/** Only reached by a link inside the app: the server answers unknown paths with its own 404. */
export function NotFoundPage() {
  usePageTitle('Page not found');
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is nothing here. Go to the <Link to="/">overview</Link>.
      </p>
    </>
  );
}
