// Usage records as rows, and the ledger entries a batch of them adds: shared by the
// Kysely path (PostgreSQL) and the prepared-statement path (SQLite).
import type { Insertable } from 'kysely';
import type { CappedCharge, UsageRecord } from './store.js';
import type { LedgerEntriesTable, UsageRecordsTable } from './tables.js';

/**
 * The ledger side of a usage batch: one 'usage' entry per newly stored record with a
 * cost, charging its cost less the shortfall the live book already found, and cut at the
 * balance left (the request path settles against what is available, so a further cut
 * means the balance was taken elsewhere meanwhile). Every record charged less than its
 * cost is returned as capped; the record keeps its full cost, and the caller stores its
 * final shortfall. `balances` is updated in place.
 */
export function planUsageCharges(
  inserted: readonly UsageRecord[],
  balances: Map<string, number>,
  at: string,
): { entries: Insertable<LedgerEntriesTable>[]; chargedByAccount: Map<string, number>; capped: CappedCharge[] } {
  const entries: Insertable<LedgerEntriesTable>[] = [];
  const chargedByAccount = new Map<string, number>();
  const capped: CappedCharge[] = [];
  for (const record of inserted) {
    if (record.costMicros === 0) continue;
    const balanceMicros = balances.get(record.accountId)!;
    const chargedMicros = Math.max(0, Math.min(record.costMicros - record.shortfallMicros, balanceMicros));
    balances.set(record.accountId, balanceMicros - chargedMicros);
    if (chargedMicros < record.costMicros) capped.push({ accountId: record.accountId, usageId: record.id, costMicros: record.costMicros, chargedMicros });
    if (chargedMicros > 0) chargedByAccount.set(record.accountId, (chargedByAccount.get(record.accountId) ?? 0) + chargedMicros);
    entries.push({
      account_id: record.accountId,
      kind: 'usage',
      amount_micros: chargedMicros === 0 ? 0 : -chargedMicros,
      reason:
        chargedMicros < record.costMicros
          ? `${record.model}: capped at the balance left (cost ${record.costMicros} micros)`
          : record.model,
      reference: record.id,
      created_at: at,
    });
  }
  return { entries, chargedByAccount, capped };
}

export function toUsageRow(record: UsageRecord): UsageRecordsTable {
  return {
    id: record.id,
    request_id: record.requestId,
    account_id: record.accountId,
    key_id: record.keyId,
    member_id: record.memberId,
    model: record.model,
    prompt_tokens: record.promptTokens,
    completion_tokens: record.completionTokens,
    cost_micros: record.costMicros,
    latency_ms: record.latencyMs,
    cached_tokens: record.cachedTokens,
    cache_write_tokens: record.cacheWriteTokens,
    cache_write_1h_tokens: record.cacheWrite1hTokens,
    reasoning_tokens: record.reasoningTokens,
    basis: record.basis,
    outcome: record.outcome,
    shortfall_micros: record.shortfallMicros,
    held_micros: record.heldMicros,
    status: record.status,
    streamed: record.streamed ? 1 : 0,
    finish_reason: record.finishReason,
    created_at: record.createdAt,
  };
}
