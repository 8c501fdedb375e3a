import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';
import { AdminAccountPage } from './admin/AdminAccountPage';
import { AdminAccountsPage } from './admin/AdminAccountsPage';
import { AdminAuditPage } from './admin/AdminAuditPage';
import { AdminCatalogPage } from './admin/AdminCatalogPage';
import { AdminCodesPage } from './admin/AdminCodesPage';
import { AdminConsole } from './admin/AdminConsole';
import { AdminOverviewPage } from './admin/AdminOverviewPage';
import { Layout } from './components/Layout';
import { RequireSession } from './components/RequireSession';
import { KeysPage } from './pages/KeysPage';
import { ModelsPage } from './pages/ModelsPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { OrgPage } from './pages/OrgPage';
import { OverviewPage } from './pages/OverviewPage';
import { PlansPage } from './pages/PlansPage';
import { RequestLogPage } from './pages/RequestLogPage';
import { SettingsPage } from './pages/SettingsPage';
import { WebhooksPage } from './pages/WebhooksPage';
import { ConfirmEmailPage } from './pages/ConfirmEmailPage';
import { ForgotPasswordPage } from './pages/ForgotPasswordPage';
import { InvitePage } from './pages/InvitePage';
import { ResetPasswordPage } from './pages/ResetPasswordPage';
import { SignInPage } from './pages/SignInPage';
import { SignUpPage } from './pages/SignUpPage';
import { OrgsProvider } from './orgs';

// The charts library is most of the bundle; only the usage page loads it.
const UsagePage = lazy(() => import('./pages/UsagePage').then((module) => ({ default: module.UsagePage })));

/** The pages; the server answers each of these paths with index.html (web-app.ts). */
export function App() {
  return (
    <Routes>
      <Route path="/signin" element={<SignInPage />} />
      <Route path="/signup" element={<SignUpPage />} />
      <Route path="/forgot-password" element={<ForgotPasswordPage />} />
      <Route path="/reset-password" element={<ResetPasswordPage />} />
      <Route path="/confirm-email" element={<ConfirmEmailPage />} />
      <Route path="/invite/:token" element={<InvitePage />} />
      <Route
        path="/admin"
        element={
          <RequireSession>
            <AdminConsole />
          </RequireSession>
        }
      >
        <Route index element={<AdminOverviewPage />} />
        <Route path="accounts" element={<AdminAccountsPage />} />
        <Route path="accounts/:id" element={<AdminAccountPage />} />
        <Route path="codes" element={<AdminCodesPage />} />
        <Route path="catalog" element={<AdminCatalogPage />} />
        <Route path="audit" element={<AdminAuditPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
      <Route
        element={
          <RequireSession>
            <OrgsProvider>
              <Layout />
            </OrgsProvider>
          </RequireSession>
        }
      >
        <Route index element={<OverviewPage />} />
        <Route path="keys" element={<KeysPage />} />
        <Route
          path="usage"
          element={
            <Suspense fallback={<p className="muted loading">Loading…</p>}>
              <UsagePage />
            </Suspense>
          }
        />
        <Route path="requests" element={<RequestLogPage />} />
        <Route path="models" element={<ModelsPage />} />
        <Route path="org" element={<OrgPage />} />
        <Route path="billing/plans" element={<PlansPage />} />
        <Route path="settings/webhooks" element={<WebhooksPage />} />
        <Route path="settings" element={<SettingsPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}
