// The usage stream's entries: SETTLE appends one per settled request (fields account, cost,
// pending: the part of the cost counted in the account's pending, and record, the usage
// record as JSON), usage-stream-writer.ts stores and deletes them.
import type { Redis } from 'ioredis';
import type { UsageRecord } from '../store/store.js';

export type StreamEntry = [id: string, fields: string[]];

export interface StreamedUsage {
  accountId: string;
  costMicros: number;
  /** What its settlement added to the account's `pending` (nothing without a mirror). */
  pendingMicros: number;
  record: UsageRecord;
}

/**
 * An entry as the store takes it: the record, with the part of its cost that was not
 * charged (SETTLE's `cost` is what was) as its shortfall. A record settled by an instance
 * that predates token kinds gets their defaults.
 */
export function readEntry(fields: string[]): StreamedUsage {
  const values = new Map<string, string>();
  for (let i = 0; i < fields.length; i += 2) values.set(fields[i]!, fields[i + 1]!);
  const costMicros = Number(values.get('cost'));
  const record = { ...RECORD_DEFAULTS, ...(JSON.parse(values.get('record')!) as Partial<UsageRecord>) } as UsageRecord;
  record.shortfallMicros = Math.max(0, record.costMicros - costMicros);
  // An entry of an instance that predates the field: its charge was pending when a mirror existed.
  const pendingMicros = values.has('pending') ? Number(values.get('pending')) : costMicros;
  return { accountId: values.get('account')!, costMicros, pendingMicros, record };
}

const RECORD_DEFAULTS: Partial<UsageRecord> = {
  memberId: null,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  reasoningTokens: 0,
  basis: 'reported',
  outcome: 'completed',
  shortfallMicros: 0,
  heldMicros: 0,
};

const PAGE = 1_000;

/**
 * The records in the stream now: settled, and not yet acknowledged as stored (some may be
 * in the store already, between its commit and the acknowledgement). Read page by page: an
 * entry deleted before its page is read was stored before that.
 */
export async function* streamedRecords(redis: Redis, stream: string): AsyncGenerator<UsageRecord> {
  let from = '-';
  for (;;) {
    const page = (await redis.xrange(stream, from, '+', 'COUNT', PAGE)) as StreamEntry[];
    for (const [, fields] of page) if (fields.length > 0) yield readEntry(fields).record;
    if (page.length < PAGE) return;
    from = `(${page[page.length - 1]![0]}`;
  }
}
