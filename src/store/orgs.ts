// Organisations: an account row of kind 'org' with members and budgets (org-store.ts has
// the port). Membership and budget changes record an account change for the organisation,
// so every instance reloads what it cached of it (its budgets) at once.
import type { Selectable } from 'kysely';
import { NotFoundInStoreError, OrgNameTakenError } from '../errors.js';
import { newId } from '../ids.js';
import { checkMicros } from '../money.js';
import { newAccountRow, toAccount } from './accounts.js';
import { recordChange } from './changes.js';
import type { Dialect } from './dialect.js';
import { revokeKey } from './keys.js';
import type { Membership, OrgBudget, OrgMember, OrgRole } from './org-store.js';
import { isUniqueViolation, now, type Db } from './sql.js';
import type { Account } from './store.js';
import type { AccountsTable } from './tables.js';

/** An organisation has no address of its own: mail for it goes to its owners and billing members. */
const ORG_ADDRESS_DOMAIN = 'org.invalid';

/** In the caller's transaction: the organisation and its first owner. */
export async function createOrg(trx: Db, input: { name: string; tier: string; ownerId: string }): Promise<Account> {
  const at = now();
  const id = newId('acct');
  const row: AccountsTable = { ...newAccountRow({ email: `${id}@${ORG_ADDRESS_DOMAIN}`, name: input.name.trim(), tier: input.tier }, at), id, kind: 'org' };
  try {
    await trx.insertInto('accounts').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new OrgNameTakenError(row.name!);
    throw err;
  }
  await trx.insertInto('org_members').values({ org_id: id, account_id: input.ownerId, role: 'owner', created_at: at }).execute();
  return toAccount(row);
}

export async function findOrg(db: Db, idOrName: string): Promise<Account | undefined> {
  const ref = idOrName.trim();
  const row = await db
    .selectFrom('accounts')
    .selectAll()
    .where('kind', '=', 'org')
    .where((eb) => eb.or([eb('id', '=', ref), eb('name', '=', ref)]))
    .executeTakeFirst();
  return row && toAccount(row);
}

export async function listOrgs(db: Db): Promise<(Account & { balanceMicros: number; members: number })[]> {
  const rows = await db
    .selectFrom('accounts')
    .selectAll('accounts')
    .select((eb) => eb.selectFrom('org_members').select(eb.fn.countAll<number | string>().as('n')).whereRef('org_members.org_id', '=', 'accounts.id').as('members'))
    .where('kind', '=', 'org')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ ...toAccount(row), balanceMicros: checkMicros(Number(row.balance_micros)), members: Number(row.members ?? 0) }));
}

const ROLE_ORDER: Record<OrgRole, number> = { owner: 0, admin: 1, billing: 2, member: 3 };

export async function listMembers(db: Db, orgId: string): Promise<OrgMember[]> {
  const rows = await db
    .selectFrom('org_members')
    .innerJoin('accounts', 'accounts.id', 'org_members.account_id')
    .select(['org_members.account_id', 'org_members.role', 'org_members.created_at', 'accounts.email', 'accounts.name'])
    .where('org_members.org_id', '=', orgId)
    .orderBy('org_members.created_at')
    .orderBy('org_members.account_id')
    .execute();
  return rows
    .map((row) => ({ accountId: row.account_id, email: row.email, name: row.name, role: row.role as OrgRole, joinedAt: row.created_at }))
    .sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role]);
}

export async function findMembership(db: Db, orgId: string, accountId: string): Promise<Membership | undefined> {
  const [membership] = await memberships(db, accountId, orgId);
  return membership;
}

export function listMemberships(db: Db, accountId: string): Promise<Membership[]> {
  return memberships(db, accountId, undefined);
}

async function memberships(db: Db, accountId: string, orgId: string | undefined): Promise<Membership[]> {
  let query = db
    .selectFrom('org_members')
    .innerJoin('accounts', 'accounts.id', 'org_members.org_id')
    .selectAll('accounts')
    .select('org_members.role as member_role')
    .where('org_members.account_id', '=', accountId);
  if (orgId !== undefined) query = query.where('org_members.org_id', '=', orgId);
  const rows = await query.orderBy('accounts.name').execute();
  return rows.map((row) => ({ org: toAccount(row as Selectable<AccountsTable>), role: row.member_role as OrgRole }));
}

/** In the caller's transaction. */
export async function setMember(trx: Db, dialect: Dialect, orgId: string, accountId: string, role: OrgRole): Promise<void> {
  await trx
    .insertInto('org_members')
    .values({ org_id: orgId, account_id: accountId, role, created_at: now() })
    .onConflict((oc) => oc.columns(['org_id', 'account_id']).doUpdateSet({ role }))
    .execute();
  await recordChange(trx, dialect, 'account', orgId);
}

/** In the caller's transaction. */
export async function removeMember(trx: Db, dialect: Dialect, orgId: string, accountId: string, revokeKeys: boolean): Promise<{ removed: boolean; revokedKeyIds: string[] }> {
  const deleted = await trx.deleteFrom('org_members').where('org_id', '=', orgId).where('account_id', '=', accountId).executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) return { removed: false, revokedKeyIds: [] };
  await trx.updateTable('sessions').set({ org_id: null }).where('account_id', '=', accountId).where('org_id', '=', orgId).execute();
  await trx.deleteFrom('org_budgets').where('org_id', '=', orgId).where('member_id', '=', accountId).execute();
  const revokedKeyIds: string[] = [];
  if (revokeKeys) {
    const keys = await trx.selectFrom('api_keys').select('id').where('account_id', '=', orgId).where('member_id', '=', accountId).where('revoked_at', 'is', null).execute();
    for (const { id } of keys) {
      await revokeKey(trx, dialect, id);
      revokedKeyIds.push(id);
    }
  }
  await recordChange(trx, dialect, 'account', orgId);
  return { removed: true, revokedKeyIds };
}

export async function listBudgets(db: Db, orgId: string): Promise<OrgBudget[]> {
  const rows = await db.selectFrom('org_budgets').selectAll().where('org_id', '=', orgId).orderBy('member_id').execute();
  return rows.map((row) => ({ memberId: row.member_id === '' ? null : row.member_id, monthlyMicros: checkMicros(Number(row.monthly_micros)) }));
}

/** In the caller's transaction. */
export async function setBudget(trx: Db, dialect: Dialect, orgId: string, memberId: string | null, monthlyMicros: number | null): Promise<void> {
  const member = memberId ?? '';
  if (monthlyMicros === null) {
    await trx.deleteFrom('org_budgets').where('org_id', '=', orgId).where('member_id', '=', member).execute();
  } else {
    await trx
      .insertInto('org_budgets')
      .values({ org_id: orgId, member_id: member, monthly_micros: monthlyMicros, updated_at: now() })
      .onConflict((oc) => oc.columns(['org_id', 'member_id']).doUpdateSet({ monthly_micros: monthlyMicros, updated_at: now() }))
      .execute();
  }
  await recordChange(trx, dialect, 'account', orgId);
}

/** In the caller's transaction. */
export async function setOrgRequireSso(trx: Db, dialect: Dialect, orgId: string, required: boolean): Promise<Account> {
  const row = await trx.updateTable('accounts').set({ require_sso: required ? 1 : 0, updated_at: now() }).where('id', '=', orgId).where('kind', '=', 'org').returningAll().executeTakeFirst();
  if (!row) throw new NotFoundInStoreError('organisation', orgId);
  await recordChange(trx, dialect, 'account', orgId);
  return toAccount(row);
}

export async function setSessionOrg(db: Db, tokenHash: string, orgId: string | null): Promise<void> {
  await db.updateTable('sessions').set({ org_id: orgId }).where('token_hash', '=', tokenHash).execute();
}
