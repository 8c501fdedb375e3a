// Redemption codes: stored by hash; the first redeemer gets the credits, exactly once.
import type { Selectable } from 'kysely';
import { checkMicros } from '../money.js';
import type { Dialect } from './dialect.js';
import { newId } from '../ids.js';
import { appendLedgerEntry } from './ledger.js';
import { now, type Db } from './sql.js';
import type { NewRedemptionCode, RedeemOutcome, RedemptionCode } from './store.js';
import type { RedemptionCodesTable } from './tables.js';

export async function createRedemptionCodes(db: Db, codes: readonly NewRedemptionCode[]): Promise<RedemptionCode[]> {
  const at = now();
  const rows: RedemptionCodesTable[] = codes.map((code) => ({
    id: newId('code'),
    code_hash: code.codeHash,
    hint: code.hint,
    amount_micros: checkMicros(code.amountMicros),
    expires_at: code.expiresAt,
    created_at: at,
    redeemed_by: null,
    redeemed_at: null,
    disabled_at: null,
  }));
  if (rows.length > 0) await db.insertInto('redemption_codes').values(rows).execute();
  return rows.map(toRedemptionCode);
}

export async function listRedemptionCodes(db: Db): Promise<RedemptionCode[]> {
  const rows = await db.selectFrom('redemption_codes').selectAll().orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(toRedemptionCode);
}

/** In the caller's transaction. */
export async function redeemCode(trx: Db, dialect: Dialect, accountId: string, codeHash: string, nowIso: string): Promise<RedeemOutcome> {
  // The conditional update is the claim: of concurrent redeemers, exactly one matches
  // `redeemed_at IS NULL` (PostgreSQL re-checks it after waiting on the row lock; SQLite
  // runs one writer at a time), and the others update nothing.
  const claimed = await trx
    .updateTable('redemption_codes')
    .set({ redeemed_by: accountId, redeemed_at: nowIso })
    .where('code_hash', '=', codeHash)
    .where('redeemed_at', 'is', null)
    .where('disabled_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowIso)]))
    .returning(['id', 'amount_micros'])
    .executeTakeFirst();
  if (!claimed) {
    const code = await trx.selectFrom('redemption_codes').select(['expires_at', 'redeemed_at']).where('code_hash', '=', codeHash).executeTakeFirst();
    if (!code) return { outcome: 'unknown' };
    // A disabled code reads to the customer as one that ran out.
    return { outcome: code.redeemed_at !== null ? 'already_redeemed' : 'expired' };
  }
  const amountMicros = checkMicros(Number(claimed.amount_micros));
  const { balanceMicros } = await appendLedgerEntry(trx, dialect, { accountId, kind: 'top_up', amountMicros, reason: 'redemption code', reference: claimed.id });
  return { outcome: 'redeemed', codeId: claimed.id, amountMicros, balanceMicros };
}

export async function findRedemptionCode(db: Db, codeId: string): Promise<RedemptionCode | undefined> {
  const row = await db.selectFrom('redemption_codes').selectAll().where('id', '=', codeId).executeTakeFirst();
  return row && toRedemptionCode(row);
}

/** A redeemed code stays as it is (its credits were given); any other is disabled once. */
export async function disableRedemptionCode(db: Db, codeId: string): Promise<RedemptionCode | undefined> {
  await db.updateTable('redemption_codes').set({ disabled_at: now() }).where('id', '=', codeId).where('disabled_at', 'is', null).where('redeemed_at', 'is', null).execute();
  return findRedemptionCode(db, codeId);
}

function toRedemptionCode(row: Selectable<RedemptionCodesTable>): RedemptionCode {
  return {
    id: row.id,
    hint: row.hint,
    amountMicros: checkMicros(Number(row.amount_micros)),
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    redeemedBy: row.redeemed_by,
    redeemedAt: row.redeemed_at,
    disabledAt: row.disabled_at,
  };
}
