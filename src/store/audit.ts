// The audit log: one row per admin action, appended in the transaction of the change it
// describes, read newest first.
import type { Selectable } from 'kysely';
import { checkLimit, now, type Db } from './sql.js';
import type { Actor, AuditAction, AuditEntry, AuditQuery, AuditState, NewAuditEntry } from './store.js';
import type { AuditLogTable } from './tables.js';

export async function appendAudit(db: Db, entry: NewAuditEntry): Promise<AuditEntry> {
  const row = await db
    .insertInto('audit_log')
    .values({
      actor_kind: entry.actor.kind,
      actor_id: entry.actor.id,
      action: entry.action,
      target_kind: entry.target.kind,
      target_id: entry.target.id,
      before_json: entry.before === null ? null : JSON.stringify(entry.before),
      after_json: entry.after === null ? null : JSON.stringify(entry.after),
      created_at: now(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toAuditEntry(row);
}

export async function listAudit(db: Db, query: AuditQuery): Promise<AuditEntry[]> {
  let select = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(checkLimit(query.limit));
  if (query.beforeId !== undefined) select = select.where('id', '<', query.beforeId);
  if (query.targetId !== undefined) select = select.where('target_id', '=', query.targetId);
  if (query.actorId !== undefined) select = select.where('actor_id', '=', query.actorId);
  return (await select.execute()).map(toAuditEntry);
}

function toAuditEntry(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: Number(row.id),
    actor: { kind: row.actor_kind as Actor['kind'], id: row.actor_id },
    action: row.action as AuditAction,
    target: { kind: row.target_kind as AuditEntry['target']['kind'], id: row.target_id },
    before: parseState(row.before_json),
    after: parseState(row.after_json),
    createdAt: row.created_at,
  };
}

function parseState(json: string | null): AuditState | null {
  return json === null ? null : (JSON.parse(json) as AuditState);
}
