// The roles a select offers: every role, but owner only to those who may give it.
import { formatRole, ORG_ROLES } from '../../org-permissions';

export function RoleOptions({ mayGiveOwner }: { mayGiveOwner: boolean }) {
  return (
    <>
      {ORG_ROLES.filter((option) => option !== 'owner' || mayGiveOwner).map((option) => (
        <option key={option} value={option}>
          {formatRole(option)}
        </option>
      ))}
    </>
  );
}
