// What usage data takes on disk in `npm run bench:usage-scale`: usage_records and every
// partition under it (pg_inherits, followed down; each one's tables, indexes and TOAST), the
// rollups, and the ledger beside them, per record.
import pg from 'pg';
import type { Row } from './usage-scale-report.js';

const ROLLUPS = ['usage_daily', 'refusal_daily', 'usage_models_daily', 'usage_accounts_monthly', 'usage_keys_monthly'];

/** A table with everything under it: its partitions (recursively), their indexes and TOAST. */
const TREE_SIZE = `
  with recursive tree(rel) as (select to_regclass($1) union all select i.inhrelid from pg_inherits i join tree t on i.inhparent = t.rel)
  select coalesce(sum(pg_total_relation_size(rel)), 0)::bigint as bytes,
         (count(*) filter (where c.relkind = 'r'))::int as tables
  from tree join pg_class c on c.oid = tree.rel`;

export async function measureSizes(databaseUrl: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tree = async (table: string): Promise<{ bytes: number; tables: number; rows: number } | undefined> => {
      const exists = await client.query<{ oid: string | null }>('select to_regclass($1)::oid as oid', [table]);
      if (exists.rows[0]?.oid === null) return undefined;
      const { rows } = await client.query<{ bytes: string; tables: number }>(TREE_SIZE, [table]);
      const count = await client.query<{ n: string }>(`select count(*) as n from ${table}`);
      return { bytes: Number(rows[0]!.bytes), tables: rows[0]!.tables, rows: Number(count.rows[0]!.n) };
    };
    const usage = await tree('usage_records');
    if (!usage || usage.rows === 0) throw new Error('no usage records to measure');
    const rows: Row[] = [
      { measure: 'usage records stored', value: `${usage.rows.toLocaleString('en')} in ${usage.tables} table${usage.tables === 1 ? '' : 's'} (partitions)` },
      { measure: 'bytes per record: usage_records (tables + indexes + TOAST)', value: `${(usage.bytes / usage.rows).toFixed(0)} B (${mb(usage.bytes)} MB)`, number: usage.bytes / usage.rows, unit: 'B' },
    ];
    let rollupBytes = 0;
    for (const table of ROLLUPS) {
      const rollup = await tree(table);
      if (!rollup) {
        rows.push({ measure: `rollup ${table}`, value: 'no such table (migration not there yet)' });
        continue;
      }
      rollupBytes += rollup.bytes;
      rows.push({ measure: `rollup ${table}`, value: `${rollup.rows.toLocaleString('en')} rows, ${mb(rollup.bytes)} MB`, number: rollup.rows, unit: 'rows' });
    }
    rows.push({ measure: 'bytes per record: usage_records + rollups', value: `${((usage.bytes + rollupBytes) / usage.rows).toFixed(0)} B`, number: (usage.bytes + rollupBytes) / usage.rows, unit: 'B' });
    const ledger = await tree('ledger_entries');
    if (ledger) rows.push({ measure: 'ledger_entries (kept for ever)', value: `${ledger.rows.toLocaleString('en')} rows, ${mb(ledger.bytes)} MB, ${(ledger.bytes / usage.rows).toFixed(0)} B per usage record`, number: ledger.bytes / usage.rows, unit: 'B per record' });
    return rows;
  } finally {
    await client.end();
  }
}

function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}
