// The change feed's table: what other instances must learn (a key revoked, an account
// changed, a balance moved), appended in the same transaction as the change.
import type { Dialect } from './dialect.js';
import { now, type Db } from './sql.js';
import type { Change, ChangeEvent, ChangeKind } from './store.js';

/** The changes each transaction of a unit of work recorded, by its handle. */
const recorded = new WeakMap<Db, Change[]>();

/** Appends to the change feed, which readers follow by "id greater than the last one seen". */
export async function recordChange(trx: Db, dialect: Dialect, kind: ChangeKind, subjectId: string): Promise<void> {
  await dialect.serializeChanges(trx);
  await trx.insertInto('change_events').values({ kind, subject_id: subjectId, created_at: now() }).execute();
  const changes = recorded.get(trx);
  if (changes && !changes.some((change) => change.kind === kind && change.subjectId === subjectId)) changes.push({ kind, subjectId });
}

/** From now on, the changes recorded in `trx` (a transaction) are kept in the list returned. */
export function keepChanges(trx: Db): Change[] {
  let changes = recorded.get(trx);
  if (!changes) recorded.set(trx, (changes = []));
  return changes;
}

export async function latestChangeId(db: Db): Promise<number> {
  const row = await db
    .selectFrom('change_events')
    .select((eb) => eb.fn.max('id').as('max_id'))
    .executeTakeFirst();
  return Number(row?.max_id ?? 0);
}

export async function changesAfter(db: Db, id: number): Promise<ChangeEvent[]> {
  const rows = await db.selectFrom('change_events').select(['id', 'kind', 'subject_id']).where('id', '>', id).orderBy('id').limit(1000).execute();
  return rows.map((r) => ({ id: Number(r.id), kind: r.kind as ChangeKind, subjectId: r.subject_id }));
}

export async function pruneChanges(db: Db, olderThan: Date): Promise<void> {
  await db.deleteFrom('change_events').where('created_at', '<', olderThan.toISOString()).execute();
}
