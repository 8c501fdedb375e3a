// A key's own limits within its account's, as the console lists them: requests per
// minute, credit limit, models, addresses and expiry; "None" when it has none.
import { formatCredits, formatExpiry, formatNumber } from '../format';
import type { AdminKeyControls } from './admin-api';

export function KeyLimits({ controls }: { controls: AdminKeyControls }) {
  const limits: string[] = [];
  if (controls.rpm !== null) limits.push(`${formatNumber(controls.rpm)} requests/min`);
  if (controls.credit_limit_micros !== null) limits.push(`${formatCredits(controls.credit_limit_micros)} credits${controls.credit_limit_period === 'month' ? ' a month' : ' in all'}`);
  if (controls.allowed_models !== null) limits.push(`models: ${controls.allowed_models.join(', ')}`);
  if (controls.allowed_ips !== null) limits.push(`from: ${controls.allowed_ips.join(', ')}`);
  if (controls.expires_at !== null) limits.push(`expires ${formatExpiry(controls.expires_at)}`);
  if (limits.length === 0) return <span className="muted">None</span>;
  return (
    <ul className="plain-list key-limits">
      {limits.map((limit) => (
        <li key={limit}>{limit}</li>
      ))}
    </ul>
  );
}
