import type { AdminAccount } from './admin-api';
import { formatDateTime, formatPlanName } from '../format';

/**
 * An account's tier, marked when the config no longer has it and its requests are served as
 * the default tier, when it is complimentary, and when the API refuses the account for want of a subscription.
 */
export function AccountTier({ account }: { account: Pick<AdminAccount, 'tier' | 'served_tier' | 'standing' | 'comp_until'> }) {
  if (account.served_tier === account.tier) return <>{formatPlanName(account.tier)}{standingBadge(account)}</>;
  return (
    <>
      {formatPlanName(account.tier)}{' '}
      <span className="badge danger" title={`The config has no tier “${account.tier}”: this account is served as ${formatPlanName(account.served_tier)}.`}>
        not configured: served as {formatPlanName(account.served_tier)}
      </span>
    </>
  );
}

function standingBadge({ standing, comp_until: until }: Pick<AdminAccount, 'standing' | 'comp_until'>) {
  if (standing === 'complimentary') return <> <span className="badge">complimentary{until === null ? '' : ` until ${formatDateTime(until)}`}</span></>;
  if (standing === 'subscription_required' || standing === 'subscription_lapsed') {
    return <> <span className="badge danger" title="Every API request is refused (403 subscription_inactive)">no subscription: API refused</span></>;
  }
  return null;
}
