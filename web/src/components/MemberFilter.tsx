// One member's usage or requests in an organisation (?member=ACCOUNT_ID). Shown only when
// the dashboard acts for an organisation and the role sees everyone's; a member sees their own.
import { may } from '../org-permissions';
import { useOrgs } from '../orgs';
import type { OrgDetail } from '../types';
import { useApiData } from '../use-api-data';

export function MemberFilter({ id, value, onChange }: { id: string; value: string; onChange(memberId: string): void }) {
  const { current } = useOrgs();
  const shown = current !== null && may(current, 'usage');
  const detail = useApiData<OrgDetail>(shown ? '/orgs/current' : null);
  if (!shown) return null;
  return (
    <div className="field">
      <label htmlFor={id}>Member</label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">All members</option>
        {(detail.data?.members ?? []).map((member) => (
          <option key={member.accountId} value={member.accountId}>
            {member.name === null ? member.email : `${member.name} (${member.email})`}
          </option>
        ))}
      </select>
    </div>
  );
}
