// One page of an account's request log as the customer's dashboard and the operator's
// console both show it: within the retention, newest first, each entry with its key's name
// ('' for a key no longer found), and the cursor of the next page (`at|id`) when there is one.
import type { Store } from './store.js';
import type { RequestLogEntry } from './request-log-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RequestLogPageQuery {
  /** The cursor a page before gave as `next`. */
  before?: string;
  keyId?: string;
  /** An organisation's member: the requests of the keys they made. */
  memberId?: string;
  model?: string;
  outcome?: 'succeeded' | 'failed';
  limit: number;
}

export interface RequestLogPage {
  entries: (RequestLogEntry & { keyName: string })[];
  next: string | null;
}

export async function requestLogPage(store: Pick<Store, 'listRequestLog' | 'listKeys'>, accountId: string, retentionDays: number, query: RequestLogPageQuery): Promise<RequestLogPage> {
  const { before, keyId, memberId, model, outcome, limit } = query;
  const [at, id] = before?.split('|') ?? [];
  const [entries, keys] = await Promise.all([
    // One more than the page tells whether another follows.
    store.listRequestLog(accountId, {
      sinceIso: new Date(Date.now() - retentionDays * DAY_MS).toISOString(),
      limit: limit + 1,
      ...(at !== undefined && id !== undefined ? { before: { at, id } } : {}),
      ...(keyId === undefined ? {} : { keyId }),
      ...(memberId === undefined ? {} : { memberId }),
      ...(model === undefined ? {} : { model }),
      ...(outcome === undefined ? {} : { outcome }),
    }),
    store.listKeys(accountId),
  ]);
  const names = new Map(keys.map((k) => [k.id, k.name]));
  const page = entries.slice(0, limit);
  const last = page.at(-1);
  return {
    entries: page.map((entry) => ({ ...entry, keyName: names.get(entry.keyId) ?? '' })),
    next: entries.length > limit && last ? `${last.at}|${last.id}` : null,
  };
}
