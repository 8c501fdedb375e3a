// The ledger: append-only entries, and the balance each account keeps beside them (always
// their sum), moved in the same transaction as the entry.
import { sql, type Insertable, type Selectable } from 'kysely';
import { checkMicros } from '../money.js';
import { rearmBalanceAlert } from './alerts.js';
import { recordChange } from './changes.js';
import type { Dialect } from './dialect.js';
import { checkLimit, now, type Db } from './sql.js';
import { BalanceWouldGoNegativeError, NotFoundInStoreError, type LedgerEntry, type LedgerKind, type NewLedgerEntry, type VersionedBalance } from './store.js';
import type { LedgerEntriesTable } from './tables.js';

/**
 * One ledger entry and the balance it moves, in the caller's transaction, with a 'balance'
 * change event. Throws BalanceWouldGoNegativeError instead of going below zero.
 */
export async function appendLedgerEntry(trx: Db, dialect: Dialect, input: NewLedgerEntry): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
  const row = toLedgerRow(input, now());
  const balances = await dialect.lockBalances(trx, [input.accountId]);
  const balanceMicros = balances.get(input.accountId)!;
  if (balanceMicros + row.amount_micros < 0) throw new BalanceWouldGoNegativeError(balanceMicros, row.amount_micros);
  const stored = await trx.insertInto('ledger_entries').values(row).returningAll().executeTakeFirstOrThrow();
  const updated = await trx
    .updateTable('accounts')
    .set((eb) => ({ balance_micros: eb('balance_micros', '+', row.amount_micros), balance_version: eb('balance_version', '+', 1) }))
    .where('id', '=', input.accountId)
    .returning('balance_micros')
    .executeTakeFirstOrThrow();
  if (row.amount_micros > 0) await rearmBalanceAlert(trx, input.accountId, checkMicros(Number(updated.balance_micros)));
  // Last, after the account row lock (see Dialect.serializeChanges).
  await recordChange(trx, dialect, 'balance', input.accountId);
  return { entry: toLedgerEntry(stored), balanceMicros: checkMicros(Number(updated.balance_micros)) };
}

export async function versionedBalanceOf(db: Db, accountId: string): Promise<VersionedBalance> {
  const row = await db.selectFrom('accounts').select(['balance_micros', 'balance_version']).where('id', '=', accountId).executeTakeFirst();
  if (!row) throw new NotFoundInStoreError('account', accountId);
  return { balanceMicros: checkMicros(Number(row.balance_micros)), version: Number(row.balance_version) };
}

export async function balanceOf(db: Db, accountId: string): Promise<number> {
  const row = await db.selectFrom('accounts').select('balance_micros').where('id', '=', accountId).executeTakeFirst();
  if (!row) throw new NotFoundInStoreError('account', accountId);
  return checkMicros(Number(row.balance_micros));
}

export async function sumLedger(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('amount_micros'), sql.lit(0)).as('total'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  // PostgreSQL sums BIGINT into NUMERIC, which pg hands over as a string.
  return checkMicros(Number(row.total));
}

export async function listLedger(db: Db, accountId: string, options: { limit?: number; beforeId?: number } = {}): Promise<LedgerEntry[]> {
  let query = db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc');
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  if (options.limit !== undefined) query = query.limit(checkLimit(options.limit));
  return (await query.execute()).map(toLedgerEntry);
}

const LEDGER_KINDS: Record<LedgerKind, true> = {
  grant: true,
  top_up: true,
  subscription_credit: true,
  usage: true,
  refund: true,
  adjustment: true,
};

function isLedgerKind(kind: string): kind is LedgerKind {
  return Object.hasOwn(LEDGER_KINDS, kind);
}

function toLedgerRow(input: NewLedgerEntry, at: string): Insertable<LedgerEntriesTable> {
  if (!isLedgerKind(input.kind)) throw new RangeError(`not a ledger kind: ${String(input.kind)}`);
  // The column widths, checked here so SQLite (which ignores them) fails like PostgreSQL.
  if ((input.reason?.length ?? 0) > 500) throw new RangeError('a ledger reason is at most 500 characters');
  if ((input.reference?.length ?? 0) > 200) throw new RangeError('a ledger reference is at most 200 characters');
  return {
    account_id: input.accountId,
    kind: input.kind,
    amount_micros: checkMicros(input.amountMicros),
    reason: input.reason ?? null,
    reference: input.reference ?? null,
    created_at: at,
  };
}

function toLedgerEntry(row: Selectable<LedgerEntriesTable>): LedgerEntry {
  if (!isLedgerKind(row.kind)) throw new RangeError(`ledger entry ${row.id} has an unknown kind ${JSON.stringify(row.kind)}`);
  return {
    id: Number(row.id),
    accountId: row.account_id,
    kind: row.kind,
    amountMicros: checkMicros(Number(row.amount_micros)),
    reason: row.reason,
    reference: row.reference,
    createdAt: row.created_at,
  };
}
