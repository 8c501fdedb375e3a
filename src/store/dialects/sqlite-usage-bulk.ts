// recordUsage on SQLite with prepared statements in one synchronous transaction. Same
// semantics as PostgreSQL's path in postgres.ts (see Store.recordUsage). It runs on the
// usage write thread's own connection, or, inside a caller's transaction, on the Kysely
// handle under its connection lock.
import type SqliteDatabase from 'better-sqlite3';
import { checkMicros } from '../../money.js';
import { NotFoundInStoreError, type CappedCharge, type UsageRecord } from '../store.js';
import { COARSE_ROLLUP_COLUMNS, coarseRollups, shortfallsOf, upsertSql, USAGE_DAILY_COLUMNS, usageRollups, valuesOf, type CoarseRollupTable } from '../usage-rollup.js';
import { planUsageCharges } from '../usage-rows.js';

type Write = (records: readonly UsageRecord[], at: string) => CappedCharge[];

/** A batch sent to the usage write thread, and its answer. */
export interface UsageBatchRequest {
  id: number;
  records: readonly UsageRecord[];
  at: string;
}
export type UsageBatchReply =
  | { id: number; capped: CappedCharge[]; threadCpuSeconds: number | undefined }
  | { id: number; missingAccount: string }
  | { id: number; error: { name: string; message: string; stack?: string } };

export class SqliteUsageBulk {
  private write: SqliteDatabase.Transaction<Write> | undefined;

  constructor(private readonly sqlite: SqliteDatabase.Database) {}

  recordUsage(records: readonly UsageRecord[], at: string): CappedCharge[] {
    // IMMEDIATE takes the write lock up front, so a CLI write in between cannot turn this
    // read-then-write transaction into SQLITE_BUSY_SNAPSHOT.
    return (this.write ??= this.prepare()).immediate(records, at);
  }

  /** Prepared on first use: the tables exist only once migrations ran. */
  private prepare(): SqliteDatabase.Transaction<Write> {
    const insertUsage = this.sqlite.prepare(
      `INSERT INTO usage_records (id, request_id, account_id, key_id, model, prompt_tokens, completion_tokens,
         cached_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, basis, outcome,
         cost_micros, shortfall_micros, held_micros, latency_ms, status, streamed, finish_reason, created_at, member_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    );
    const setShortfall = this.sqlite.prepare('UPDATE usage_records SET shortfall_micros = ? WHERE id = ?');
    const selectBalance = this.sqlite.prepare<[string], { balance_micros: number }>('SELECT balance_micros FROM accounts WHERE id = ?');
    const insertLedger = this.sqlite.prepare(
      `INSERT INTO ledger_entries (account_id, kind, amount_micros, reason, reference, created_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    const debitBalance = this.sqlite.prepare('UPDATE accounts SET balance_micros = balance_micros - ?, balance_version = balance_version + 1 WHERE id = ?');
    const upsertDaily = this.sqlite.prepare(upsertSql('usage_daily'));
    const upsertCoarse = Object.fromEntries(
      Object.keys(COARSE_ROLLUP_COLUMNS).map((table) => [table, this.sqlite.prepare(upsertSql(table as CoarseRollupTable))]),
    ) as Record<CoarseRollupTable, SqliteDatabase.Statement>;

    return this.sqlite.transaction<Write>((records, at) => {
      const balances = new Map<string, number>();
      for (const record of records) {
        if (balances.has(record.accountId)) continue;
        const row = selectBalance.get(record.accountId);
        if (!row) throw new NotFoundInStoreError('account', record.accountId);
        balances.set(record.accountId, checkMicros(Number(row.balance_micros)));
      }
      // Positional parameters: binding an object by name costs more than the insert.
      const inserted = records.filter(
        (r) =>
          insertUsage.run(
            r.id, r.requestId, r.accountId, r.keyId, r.model, r.promptTokens, r.completionTokens,
            r.cachedTokens, r.cacheWriteTokens, r.cacheWrite1hTokens, r.reasoningTokens, r.basis, r.outcome,
            r.costMicros, r.shortfallMicros, r.heldMicros, r.latencyMs, r.status, r.streamed ? 1 : 0, r.finishReason, r.createdAt, r.memberId,
          ).changes === 1,
      );
      const { entries, chargedByAccount, capped } = planUsageCharges(inserted, balances, at);
      for (const e of entries) insertLedger.run(e.account_id, e.kind, e.amount_micros, e.reason, e.reference, e.created_at);
      for (const [accountId, chargedMicros] of chargedByAccount) debitBalance.run(chargedMicros, accountId);
      for (const cut of capped) setShortfall.run(cut.costMicros - cut.chargedMicros, cut.usageId);
      const daily = usageRollups(inserted, shortfallsOf(capped));
      for (const row of daily) upsertDaily.run(...valuesOf(row, USAGE_DAILY_COLUMNS));
      for (const [table, rows] of Object.entries(coarseRollups(daily)) as [CoarseRollupTable, object[]][]) {
        for (const row of rows) upsertCoarse[table].run(...valuesOf(row, COARSE_ROLLUP_COLUMNS[table]));
      }
      return capped;
    });
  }
}
