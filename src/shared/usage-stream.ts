// The usage stream's entries: SETTLE appends one per settled request (fields account, cost
// and record, the usage record as JSON), usage-stream-writer.ts stores and deletes them.
import type { Redis } from 'ioredis';
import type { UsageRecord } from '../store/store.js';

export type StreamEntry = [id: string, fields: string[]];

export interface StreamedUsage {
  accountId: string;
  costMicros: number;
  record: UsageRecord;
}

export function readEntry(fields: string[]): StreamedUsage {
  const values = new Map<string, string>();
  for (let i = 0; i < fields.length; i += 2) values.set(fields[i]!, fields[i + 1]!);
  return { accountId: values.get('account')!, costMicros: Number(values.get('cost')), record: JSON.parse(values.get('record')!) as UsageRecord };
}

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
