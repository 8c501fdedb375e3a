// The hourly housekeeping on a real store: the coming months' partitions made before any
// write needs them (PostgreSQL), and raw usage past usage.retention_days removed, rollups kept.
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageHousekeeping } from '../../src/cluster/usage-housekeeping.js';
import type { KyselyStore } from '../../src/store/kysely-store.js';
import { kyselyOf, STORE_BACKENDS, type OpenedStore } from '../helpers/store-backends.js';
import { plainRecord } from '../helpers/usage-record.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const NOW = Date.parse('2031-01-20T10:00:00.000Z');

describe.each(STORE_BACKENDS)('usage housekeeping on $name', (backend) => {
  let opened: OpenedStore;
  let store: KyselyStore;

  beforeEach(async () => {
    opened = await backend.open();
    store = kyselyOf(opened);
    await store.migrate();
  });

  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  it('makes this month and the next two ahead, for usage and refusals', async () => {
    await new UsageHousekeeping(store, undefined).run(NOW);
    if (backend.name === 'sqlite') {
      // One table each, nothing made.
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where name like '%_p2031_%'`.execute(store.db);
      return expect(rows).toEqual([]);
    }
    const { rows } = await sql<{ name: string }>`select relname as name from pg_class where relispartition and relkind = 'r' and relname like '%_p2031_%' order by 1`.execute(store.db);
    expect(rows.map((r) => r.name)).toEqual([
      'refused_requests_p2031_01', 'refused_requests_p2031_02', 'refused_requests_p2031_03',
      'usage_records_p2031_01', 'usage_records_p2031_02', 'usage_records_p2031_03',
    ]);
  });

  it('keeps every record without a retention, and removes those past it with one', async () => {
    const account = await store.createAccount({ email: 'kept@example.test', tier: 'free' });
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000_000 });
    const ages = [40, 31, 29, 1];
    await store.recordUsage(ages.map((days) => ({ ...plainRecord(account.id, 10), createdAt: new Date(NOW - days * DAY_MS).toISOString() })));
    const range = { fromIso: new Date(NOW - 60 * DAY_MS).toISOString(), untilIso: new Date(NOW).toISOString() };
    const charts = await store.summarizeUsage(account.id, range);

    await new UsageHousekeeping(store, undefined).run(NOW);
    expect(await store.listUsage(account.id)).toHaveLength(4);

    await new UsageHousekeeping(store, 30).run(NOW);
    expect((await store.listUsage(account.id)).map((r) => Math.round((NOW - Date.parse(r.createdAt)) / DAY_MS))).toEqual([1, 29]);
    expect(await store.summarizeUsage(account.id, range)).toEqual(charts);
    expect(await store.balanceOf(account.id)).toBe(1_000_000 - 40);
  });
});
