import type { AdminAccount } from './admin-api';
import { formatPlanName } from '../format';

/** An account's tier, marked when the config no longer has it and its requests are served as the default tier. */
export function AccountTier({ account }: { account: Pick<AdminAccount, 'tier' | 'served_tier'> }) {
  if (account.served_tier === account.tier) return <>{formatPlanName(account.tier)}</>;
  return (
    <>
      {formatPlanName(account.tier)}{' '}
      <span className="badge danger" title={`The config has no tier “${account.tier}”: this account is served as ${formatPlanName(account.served_tier)}.`}>
        not configured: served as {formatPlanName(account.served_tier)}
      </span>
    </>
  );
}
