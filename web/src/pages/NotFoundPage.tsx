import { Link } from 'react-router';
import { PageHeader } from '../components/PageHeader';
import { usePageTitle } from '../page-title';

/** An address outside the app: the server answers a browser with the app and status 404, and this shows. */
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
