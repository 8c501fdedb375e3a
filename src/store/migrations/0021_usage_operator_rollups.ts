// Rollups for reads across every account (the console's Overview, the admin usage API),
// beside usage_daily, whose rows are nearly one per record once accounts are many: per UTC
// day, model and status (the days, models and statuses of a period), and per month and
// account or key (who used the most: ranked by cost within each month, see usage-top.ts).
// Filled from usage_daily; the usage write keeps them in step from then on.
import { sql, type Kysely } from 'kysely';
import { isPostgres, type MigrationDb } from './dialect.js';

// usage_daily's sums as of this migration (a migration never follows later code).
const USAGE_DAILY_SUMS = [
  'requests', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cache_write_tokens',
  'cache_write_1h_tokens', 'reasoning_tokens', 'counted_requests', 'cost_micros', 'shortfall_micros',
] as const;
const SUMS = sql.raw(USAGE_DAILY_SUMS.join(', '));
const SUMMED = sql.raw(USAGE_DAILY_SUMS.map((column) => `sum(${column})`).join(', '));

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  const pg = isPostgres(db);
  const dayType = pg ? 'date' : 'varchar(10)';
  await createSums(db, 'usage_models_daily', [['day', dayType], ['model', 'varchar(200)'], ['status', 'integer']], ['day', 'model', 'status']);
  // Keyed by who first: a period's totals of a few hundred candidates read their months side by side.
  await createSums(db, 'usage_accounts_monthly', [['month', dayType], ['account_id', 'varchar(40)']], ['account_id', 'month']);
  await createSums(db, 'usage_keys_monthly', [['month', dayType], ['key_id', 'varchar(40)'], ['account_id', 'varchar(40)']], ['key_id', 'month']);
  // Each month's biggest spenders first: the top of a period reads a few rows of each month.
  await sql`create index usage_accounts_monthly_month_cost on usage_accounts_monthly (month, cost_micros desc)`.execute(db);
  await sql`create index usage_keys_monthly_month_cost on usage_keys_monthly (month, cost_micros desc)`.execute(db);
  // One account's keys (the admin API's report of one account).
  await sql`create index usage_keys_monthly_account_id_month on usage_keys_monthly (account_id, month)`.execute(db);

  // A month is its first day, as a day is stored (a date on PostgreSQL).
  const month = sql.raw(pg ? `date_trunc('month', day)::date` : `substr(day, 1, 7) || '-01'`);
  await sql`insert into usage_models_daily (day, model, status, ${SUMS})
    select day, model, status, ${SUMMED} from usage_daily group by day, model, status`.execute(db);
  await sql`insert into usage_accounts_monthly (month, account_id, ${SUMS})
    select ${month}, account_id, ${SUMMED} from usage_daily group by ${month}, account_id`.execute(db);
  // A key belongs to one account for its whole life.
  await sql`insert into usage_keys_monthly (month, key_id, account_id, ${SUMS})
    select ${month}, key_id, max(account_id), ${SUMMED} from usage_daily group by ${month}, key_id`.execute(db);
  // Statistics now, not at autovacuum's leisure: the top of a month must be an index scan.
  if (pg) await sql`analyze usage_models_daily, usage_accounts_monthly, usage_keys_monthly`.execute(db);
}

async function createSums(db: Kysely<MigrationDb>, table: string, keys: [string, string][], primaryKey: string[]): Promise<void> {
  let create = db.schema.createTable(table);
  for (const [column, type] of keys) create = create.addColumn(column, sql.raw(type), (c) => c.notNull());
  for (const sum of USAGE_DAILY_SUMS) create = create.addColumn(sum, 'bigint', (c) => c.notNull().defaultTo(0));
  await create.addPrimaryKeyConstraint(`${table}_pkey`, primaryKey as never[]).execute();
}
