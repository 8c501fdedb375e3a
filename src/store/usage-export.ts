// Raw usage records streamed out a page at a time (the dashboard's CSV, `lmgate usage
// export`): memory holds one page, whatever the range, and each page is one index range
// scan that starts where the last one ended (keyset pagination), never an OFFSET that
// rereads what came before. Each page is its own statement: a record stamped behind the
// cursor while it moves would be missed, but a record is stamped when it was served and
// written seconds later, so a period that has ended exports whole.
import { checkLimit, type Db } from './sql.js';
import type { UsageRecord } from './store.js';
import type { UsageExportQuery } from './usage-data-store.js';
import { toUsageRecord } from './usage.js';

const DEFAULT_PAGE_SIZE = 5_000;

export async function* exportUsage(db: Db, query: UsageExportQuery): AsyncIterable<UsageRecord> {
  const pageSize = checkLimit(query.pageSize ?? DEFAULT_PAGE_SIZE);
  if (pageSize === 0) throw new RangeError('exportUsage: a page holds at least one record');
  const newestFirst = query.newestFirst === true;
  const direction = newestFirst ? 'desc' : 'asc';
  let last: { createdAt: string; id: string } | undefined;
  for (;;) {
    let page = db
      .selectFrom('usage_records')
      .selectAll()
      .where('created_at', '>=', query.fromIso)
      .where('created_at', '<', query.untilIso)
      .orderBy('created_at', direction)
      .orderBy('id', direction)
      .limit(pageSize);
    if (query.accountId !== undefined) page = page.where('account_id', '=', query.accountId);
    if (query.memberId !== undefined) page = page.where('member_id', '=', query.memberId);
    if (last !== undefined) {
      const { createdAt, id } = last;
      // The bound on created_at alone narrows the index range on both databases; the
      // disjunction only breaks ties within one instant. A row value `(created_at, id) >
      // (?, ?)` would be shorter, but the account's and member's indexes do not end in id,
      // and PostgreSQL then uses it as a filter only, reading the range from its start on
      // every page.
      page = newestFirst
        ? page.where((eb) => eb.and([eb('created_at', '<=', createdAt), eb.or([eb('created_at', '<', createdAt), eb('id', '<', id)])]))
        : page.where((eb) => eb.and([eb('created_at', '>=', createdAt), eb.or([eb('created_at', '>', createdAt), eb('id', '>', id)])]));
    }
    const rows = await page.execute();
    for (const row of rows) yield toUsageRecord(row);
    if (rows.length < pageSize) return;
    const end = rows[rows.length - 1]!;
    last = { createdAt: end.created_at, id: end.id };
  }
}
