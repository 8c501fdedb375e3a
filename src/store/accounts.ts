// Accounts and their passwords. A status or tier change records a change event, so every
// instance drops the account from its cache.
import { sql, type Selectable, type SelectQueryBuilder } from 'kysely';
import { checkMicros } from '../money.js';
import { recordChange } from './changes.js';
import type { Dialect } from './dialect.js';
import { newId } from '../ids.js';
import { appendLedgerEntry } from './ledger.js';
import { checkLimit, isUniqueViolation, now, type Db } from './sql.js';
import { EmailTakenError, NotFoundInStoreError, type Account, type AccountPage, type AccountQuery, type AccountRole, type AccountStatus, type NewSignUp, type SubscriptionStatus } from './store.js';
import type { AccountsTable, Database } from './tables.js';
import type { AccountSort } from './admin-store.js';

export interface NewAccount {
  email: string;
  name?: string | null;
  tier: string;
}

/** Throws EmailTakenError: the unique index decides, so two creations racing for one email cannot both win. */
export async function createAccount(db: Db, input: NewAccount): Promise<Account> {
  const row = newAccountRow(input, now());
  await emailMustBeFree(row.email, () => db.insertInto('accounts').values(row).execute());
  return toAccount(row);
}

/** By id, or by email when the reference contains an `@`. */
export async function findAccount(db: Db, idOrEmail: string): Promise<Account | undefined> {
  const byEmail = idOrEmail.includes('@');
  const row = await db
    .selectFrom('accounts')
    .selectAll()
    .where(byEmail ? 'email' : 'id', '=', byEmail ? idOrEmail.trim().toLowerCase() : idOrEmail)
    .executeTakeFirst();
  return row && toAccount(row);
}

export async function listAccounts(db: Db): Promise<Account[]> {
  const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toAccount);
}

/** Accounts whose tier is none of `tiers` (a tier removed from the config). */
export async function countAccountsOutsideTiers(db: Db, tiers: readonly string[]): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('tier', 'not in', tiers)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function searchAccounts(db: Db, query: AccountQuery): Promise<AccountPage> {
  let matching = db.selectFrom('accounts');
  const search = query.search?.trim().toLowerCase();
  if (search) {
    // LIKE's wildcards in the search are meant literally.
    const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    matching = matching.where((eb) =>
      eb.or([
        eb('email', 'like', sql<string>`${pattern} escape '\\'`),
        eb(sql`lower(coalesce(name, ''))`, 'like', sql<string>`${pattern} escape '\\'`),
        eb('id', '=', query.search!.trim()),
      ]),
    );
  }
  const [rows, count] = await Promise.all([
    sortedBy(matching.selectAll(), query.sort ?? 'newest').limit(checkLimit(query.limit)).offset(checkLimit(query.offset)).execute(),
    matching.select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return {
    accounts: rows.map((row) => ({ ...toAccount(row), balanceMicros: checkMicros(Number(row.balance_micros)) })),
    total: Number(count.total),
  };
}

/** Each order ends on the id, so that pages neither repeat nor skip an account. */
function sortedBy<Q extends SelectQueryBuilder<Database, 'accounts', object>>(select: Q, sort: AccountSort): Q {
  switch (sort) {
    case 'oldest':
      return select.orderBy('created_at').orderBy('id') as Q;
    case 'email':
      return select.orderBy('email').orderBy('id') as Q;
    case 'balance':
      return select.orderBy('balance_micros', 'desc').orderBy('id') as Q;
    case 'newest':
      return select.orderBy('created_at', 'desc').orderBy('id', 'desc') as Q;
  }
}

/** In the caller's transaction. */
export async function updateAccount(
  trx: Db,
  dialect: Dialect,
  accountId: string,
  changes: { status?: AccountStatus; tier?: string; role?: AccountRole; price_multiplier_ppm?: number; comp_tier?: string | null; comp_until?: string | null },
): Promise<Account> {
  const row = await trx
    .updateTable('accounts')
    .set({ ...changes, updated_at: now() })
    .where('id', '=', accountId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundInStoreError('account', accountId);
  await recordChange(trx, dialect, 'account', accountId);
  return toAccount(row);
}

/** In the caller's transaction: account, password and sign-up credits together. */
export async function signUp(trx: Db, dialect: Dialect, input: NewSignUp): Promise<Account> {
  const at = now();
  const row = newAccountRow(input, at);
  await emailMustBeFree(row.email, () => trx.insertInto('accounts').values(row).execute());
  await trx.insertInto('account_passwords').values({ account_id: row.id, password_hash: input.passwordHash, updated_at: at }).execute();
  if (input.creditsMicros > 0) {
    await appendLedgerEntry(trx, dialect, { accountId: row.id, kind: 'grant', amountMicros: input.creditsMicros, reason: 'sign-up credits' });
  }
  return toAccount(row);
}

export async function findPasswordHash(db: Db, accountId: string): Promise<string | undefined> {
  const row = await db.selectFrom('account_passwords').select('password_hash').where('account_id', '=', accountId).executeTakeFirst();
  return row?.password_hash;
}

export async function setPasswordHash(db: Db, accountId: string, passwordHash: string): Promise<void> {
  await db
    .insertInto('account_passwords')
    .values({ account_id: accountId, password_hash: passwordHash, updated_at: now() })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ password_hash: passwordHash, updated_at: now() }))
    .execute();
}

async function emailMustBeFree(email: string, insert: () => Promise<unknown>): Promise<void> {
  try {
    await insert();
  } catch (err) {
    if (isUniqueViolation(err)) throw new EmailTakenError(email);
    throw err;
  }
}

/** A new (personal) account as stored: active, no subscription, no credit until a ledger entry says so. */
export function newAccountRow(input: NewAccount, at: string): AccountsTable {
  return {
    id: newId('acct'),
    email: input.email.trim().toLowerCase(),
    name: input.name ?? null,
    status: 'active',
    tier: input.tier,
    subscription_status: 'inactive',
    subscription_period_end: null,
    created_at: at,
    updated_at: at,
    balance_micros: 0,
    price_multiplier_ppm: 1_000_000,
    balance_version: 0,
    subscription_grace_until: null,
    subscription_cancel_at_period_end: 0,
    role: 'customer',
    comp_tier: null,
    comp_until: null,
    kind: 'personal',
    require_sso: 0,
  };
}

export function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    status: row.status as AccountStatus,
    tier: row.tier,
    subscriptionStatus: row.subscription_status as SubscriptionStatus,
    subscriptionPeriodEnd: row.subscription_period_end,
    subscriptionGraceUntil: row.subscription_grace_until,
    cancelAtPeriodEnd: Number(row.subscription_cancel_at_period_end) === 1,
    role: row.role === 'operator' ? 'operator' : 'customer',
    priceMultiplierPpm: Number(row.price_multiplier_ppm ?? 1_000_000),
    comp: row.comp_tier ? { tier: row.comp_tier, until: row.comp_until ?? null } : null,
    kind: row.kind === 'org' ? 'org' : 'personal',
    requireSso: Number(row.require_sso) === 1,
    createdAt: row.created_at,
  };
}
