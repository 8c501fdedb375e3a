import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { formatDateTime, formatPlanName } from '../format';
import type { Standing } from '../types';
import { ContactOperator } from './ContactOperator';
import { Notice } from './Notice';

/**
 * Why the API refuses this account, and what to do (the API's own rule, sent as `standing`);
 * nothing when it may call. `onPlans`: on the Billing page, which needs no link to itself.
 */
export function AccountStanding({ standing, plan, onPlans = false }: { standing: Standing; plan: string; onPlans?: boolean }) {
  const name = formatPlanName(plan);
  const choose = onPlans ? 'choose a plan without a subscription below' : <Link to="/billing/plans">choose a plan without a subscription</Link>;
  const refused = (reason: string): ReactNode => (
    <>
      every API request is refused (HTTP 403, <code>{reason}</code>).
    </>
  );
  switch (standing.state) {
    case 'ok':
      return null;
    case 'complimentary':
      return (
        <Notice tone="info">
          <p>
            Your {name} plan is complimentary{standing.until === null ? '' : ` until ${formatDateTime(standing.until)}`}: it needs no subscription
            {standing.until === null ? '.' : ' until then.'}
          </p>
        </Notice>
      );
    case 'past_due':
      return (
        <Notice tone="warning">
          <p>
            <strong>Your last payment for {name} failed.</strong> The plan stays until {formatDateTime(standing.until ?? '')}; update your payment
            method before then, or API requests will be refused. For help, <ContactOperator />.
          </p>
        </Notice>
      );
    case 'suspended':
      return (
        <Notice tone="error">
          <p>
            <strong>Your account is suspended:</strong> {refused('account_suspended')} To learn why and have it reactivated, <ContactOperator />.
          </p>
        </Notice>
      );
    case 'subscription_required':
      return (
        <Notice tone="error">
          <p>
            <strong>The {name} plan needs a subscription, and this account has none:</strong> {refused('subscription_inactive')} To use the API,
            subscribe, {choose}, or <ContactOperator />.
          </p>
        </Notice>
      );
    case 'subscription_lapsed':
      return (
        <Notice tone="error">
          <p>
            <strong>Your {name} subscription has ended:</strong> {refused('subscription_inactive')} To use the API, renew it, {choose}, or{' '}
            <ContactOperator />.
          </p>
        </Notice>
      );
  }
}
