// Usage data at scale. On PostgreSQL, usage_records and refused_requests become tables
// partitioned by UTC month on a timestamptz created_at (a month past the retention is one
// DROP TABLE; a range read scans only its months), keyed (created_at, id) so an operator's
// range is the primary key's order and a retried record still conflicts with itself. The
// rows move month by month. SQLite keeps one table each: its ISO 8601 text already sorts
// and range-scans as time. On both, the daily rollups the charts and reports read, filled
// from the rows there are.
import { sql, type Kysely } from 'kysely';
import { monthEnd, monthsAhead, monthsCovering, monthPartitionDdl, type PartitionedTable } from '../partitions.js';
import { isPostgres, type MigrationDb } from './dialect.js';

const USAGE_COLUMNS = `
  id varchar(40) not null,
  request_id varchar(200) not null,
  account_id varchar(40) not null references accounts (id),
  key_id varchar(40) not null,
  member_id varchar(40),
  model varchar(200) not null,
  prompt_tokens integer not null,
  completion_tokens integer not null,
  cached_tokens integer not null default 0,
  cache_write_tokens integer not null default 0,
  cache_write_1h_tokens integer not null default 0,
  reasoning_tokens integer not null default 0,
  basis varchar(10) not null default 'reported',
  outcome varchar(20) not null default 'completed',
  cost_micros bigint not null,
  shortfall_micros bigint not null default 0,
  held_micros bigint not null default 0,
  latency_ms integer not null,
  status integer not null,
  streamed integer not null check (streamed in (0, 1)),
  finish_reason varchar(40),
  created_at timestamptz not null`;

const REFUSAL_COLUMNS = `
  id varchar(40) not null,
  request_id varchar(100) not null,
  account_id varchar(40) not null references accounts (id),
  key_id varchar(40) not null,
  member_id varchar(40),
  model varchar(200),
  path varchar(200) not null,
  status integer not null,
  reason varchar(60),
  created_at timestamptz not null`;

/** Each table's indexes beside its (created_at, id) key: an account's range, a key's. */
const INDEXES: Record<PartitionedTable, string[]> = {
  usage_records: ['account_id, created_at', 'key_id, created_at'],
  refused_requests: ['account_id, created_at'],
};

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  if (isPostgres(db)) {
    await partitionByMonth(db, 'usage_records', USAGE_COLUMNS);
    await partitionByMonth(db, 'refused_requests', REFUSAL_COLUMNS);
  }
  // A member's range (budgets, usage by member): most records have no member, so only
  // those with one are indexed.
  if (!isPostgres(db)) await db.schema.dropIndex('usage_records_member_id_created_at').execute();
  await sql`create index usage_records_member_id_created_at on usage_records (member_id, created_at) where member_id is not null`.execute(db);
  // Credits added per day (the console's Overview) among millions of usage charges.
  await sql`create index ledger_entries_added_created_at on ledger_entries (created_at) where kind <> 'usage'`.execute(db);
  await createRollups(db);
  // A usage record's ledger entry, found from the record (`lmgate usage verify` joins them by day).
  await db.schema.createIndex('ledger_entries_reference').on('ledger_entries').column('reference').execute();
}

async function partitionByMonth(db: Kysely<MigrationDb>, table: PartitionedTable, columns: string): Promise<void> {
  const old = `${table}_v1`;
  await sql`alter table ${sql.table(table)} rename to ${sql.table(old)}`.execute(db);
  // Its index names are the new table's; the old ones serve nothing once the rows move.
  const { rows: indexes } = await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = ${old} and indexname not like '%pkey'`.execute(db);
  for (const index of indexes) await sql`drop index ${sql.id(index.name)}`.execute(db);
  await sql`alter table ${sql.table(old)} rename constraint ${sql.id(`${table}_pkey`)} to ${sql.id(`${old}_pkey`)}`.execute(db);

  await sql`create table ${sql.table(table)} (${sql.raw(columns)}, primary key (created_at, id)) partition by range (created_at)`.execute(db);
  for (const on of INDEXES[table]) {
    await sql`create index ${sql.id(`${table}_${on.replace(', ', '_')}`)} on ${sql.table(table)} (${sql.raw(on)})`.execute(db);
  }

  const { rows: span } = await sql<{ first: string | null; last: string | null }>`select min(created_at) as first, max(created_at) as last from ${sql.table(old)}`.execute(db);
  const months = new Set(monthsAhead(new Date().toISOString()));
  const first = span[0]?.first;
  const last = span[0]?.last;
  if (first && last) for (const month of monthsCovering(first, last)) months.add(month);
  for (const month of [...months].sort()) {
    await monthPartitionDdl(table, month).execute(db);
    // A month at a time: each statement's work (and its sort into the indexes) stays bounded.
    const from = `${month}-01T00:00:00.000Z`;
    await sql`
      insert into ${sql.table(table)} select ${sql.raw(columnNames(columns).map((c) => (c === 'created_at' ? 'created_at::timestamptz' : c)).join(', '))}
      from ${sql.table(old)} where created_at >= ${from} and created_at < ${monthEnd(month)}`.execute(db);
  }
  const { rows: counts } = await sql<{ moved: string; kept: string }>`
    select (select count(*) from ${sql.table(table)}) as moved, (select count(*) from ${sql.table(old)}) as kept`.execute(db);
  if (counts[0]?.moved !== counts[0]?.kept) throw new Error(`migration 0020: ${table} moved ${counts[0]?.moved} of ${counts[0]?.kept} rows`);
  await sql`drop table ${sql.table(old)}`.execute(db);
}

function columnNames(columns: string): string[] {
  return columns
    .split(',\n')
    .map((line) => line.trim().split(/\s+/)[0]!)
    .filter((name) => name.length > 0);
}

async function createRollups(db: Kysely<MigrationDb>): Promise<void> {
  const pg = isPostgres(db);
  const dayType = pg ? 'date' : 'varchar(10)';
  await db.schema
    .createTable('usage_daily')
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('day', sql.raw(dayType), (c) => c.notNull())
    .addColumn('key_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('member_id', 'varchar(40)')
    .$call((table) => {
      let t = table;
      for (const sum of ['requests', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cache_write_tokens', 'cache_write_1h_tokens', 'reasoning_tokens', 'counted_requests', 'cost_micros', 'shortfall_micros']) {
        t = t.addColumn(sum, 'bigint', (c) => c.notNull().defaultTo(0));
      }
      return t;
    })
    .addPrimaryKeyConstraint('usage_daily_pkey', ['account_id', 'day', 'key_id', 'model', 'status'])
    .execute();
  // The operator's days across accounts, and a key's days.
  await db.schema.createIndex('usage_daily_day').on('usage_daily').column('day').execute();
  await db.schema.createIndex('usage_daily_key_id_day').on('usage_daily').columns(['key_id', 'day']).execute();

  await db.schema
    .createTable('refusal_daily')
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('day', sql.raw(dayType), (c) => c.notNull())
    .addColumn('key_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('member_id', 'varchar(40)')
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('refusal_daily_pkey', ['account_id', 'day', 'key_id', 'status'])
    .execute();
  await db.schema.createIndex('refusal_daily_day').on('refusal_daily').column('day').execute();

  // A key's member never changes, so any of its rows' member_id is the group's.
  const day = sql.raw(pg ? `(created_at at time zone 'UTC')::date` : 'substr(created_at, 1, 10)');
  await sql`
    insert into usage_daily (account_id, day, key_id, model, status, member_id, requests, prompt_tokens, completion_tokens,
      cached_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, counted_requests, cost_micros, shortfall_micros)
    select account_id, ${day}, key_id, model, status, max(member_id), count(*), sum(prompt_tokens), sum(completion_tokens),
      sum(cached_tokens), sum(cache_write_tokens), sum(cache_write_1h_tokens), sum(reasoning_tokens),
      sum(case when basis = 'counted' then 1 else 0 end), sum(cost_micros), sum(shortfall_micros)
    from usage_records group by account_id, ${day}, key_id, model, status`.execute(db);
  await sql`
    insert into refusal_daily (account_id, day, key_id, status, member_id, requests)
    select account_id, ${day}, key_id, status, max(member_id), count(*)
    from refused_requests group by account_id, ${day}, key_id, status`.execute(db);
}
