// A whole store copied from the SQLite file into an empty PostgreSQL database (`lmgate store
// copy`): every table, every row and column as stored (ids, key and password hashes,
// timestamps, sessions, the ledger), in one PostgreSQL transaction that commits only once
// the copy has been verified. Both stores must be migrated to the same version first.
//
// Values cross as they are: timestamps are ISO 8601 text (which PostgreSQL takes into its
// timestamptz columns, migrations 0020 and 0022), flags 0/1 integers
// (migration 0002) and amounts BIGINT, which better-sqlite3 reads as numbers and
// dialects/postgres.ts parses back to numbers, so no column needs converting.
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE, sql, type Kysely } from 'kysely';
import { monthPartitionDdl, monthsCovering, PARTITIONED_TABLES } from './partitions.js';
import type { Db } from './sql.js';
import { STORE_TABLES, type StoreTable } from './tables.js';

/** The copy was refused or did not verify; nothing was committed to the target. */
export class StoreCopyError extends Error {}

export interface StoreCopyReport {
  /** Rows copied per table, in copy order; each equals the table's count on both stores. */
  tables: { table: StoreTable; rows: number }[];
  /** Accounts whose balance equals the sum of their ledger entries, on both stores. */
  accountsVerified: number;
}

// PostgreSQL binds at most 65535 parameters per statement: a batch's rows × columns stays
// below that, and below a row count that keeps one statement's text small.
const MAX_PARAMETERS = 65_535;
const MAX_ROWS_PER_INSERT = 1000;
const MAX_PROBLEMS_LISTED = 10;

/** The store's tables seen without their row types: the copy moves rows it never reads. */
type Row = Record<string, unknown>;
type AnyDb = Kysely<Record<string, Row>>;

interface AccountBalance {
  balanceMicros: number;
  ledgerMicros: number;
}

/**
 * Copies `source` (SQLite) into `target` (PostgreSQL, empty). Reads one snapshot of the
 * source, so a writer that was not stopped cannot make the two disagree. Throws
 * StoreCopyError when the target has rows, when the source has a table this code does not
 * know, or when the copy does not verify.
 */
export async function copyStore(source: Db, target: Db): Promise<StoreCopyReport> {
  await requireKnownTables(source);
  return source.connection().execute(async (snapshot) => {
    // A deferred BEGIN on a WAL database: a read snapshot that blocks no writer.
    await sql`begin`.execute(snapshot);
    try {
      return await copySnapshot(snapshot, target);
    } finally {
      await sql`rollback`.execute(snapshot);
    }
  });
}

async function copySnapshot(snapshot: Db, target: Db): Promise<StoreCopyReport> {
  const sourceBalances = await balancesWithLedgerSums(snapshot);
  const problems = ledgerProblems(sourceBalances, 'SQLite');
  if (problems.length > 0) throw new StoreCopyError(`the SQLite store does not add up, nothing was copied: ${listed(problems)}`);
  const sourceRows = await countRows(snapshot);
  const autoIncrementFloors = await sqliteSequences(snapshot);

  return target.transaction().execute(async (trx) => {
    // Writers wait until the copy commits, so the target cannot gain rows between the check
    // that it is empty and the copy; readers are not blocked.
    await sql`lock table ${sql.join(STORE_TABLES.map((table) => sql.table(table)))} in exclusive mode`.execute(trx);
    await requireEmpty(trx);
    await makePartitions(snapshot, trx);

    const tables: StoreCopyReport['tables'] = [];
    for (const table of STORE_TABLES) tables.push({ table, rows: await copyTable(snapshot, trx, table) });
    await advanceSequences(trx, autoIncrementFloors);

    const targetRows = await countRows(trx);
    const targetBalances = await balancesWithLedgerSums(trx);
    const mismatches = [
      ...STORE_TABLES.flatMap((table) => {
        const copied = tables.find((t) => t.table === table)?.rows;
        const [inSource, inTarget] = [sourceRows.get(table), targetRows.get(table)];
        return inSource === inTarget && copied === inSource ? [] : [`${table}: ${inSource} rows in SQLite, ${copied} copied, ${inTarget} in PostgreSQL`];
      }),
      ...ledgerProblems(targetBalances, 'PostgreSQL'),
      ...balanceMismatches(sourceBalances, targetBalances),
    ];
    if (mismatches.length > 0) throw new StoreCopyError(`the copy did not verify, nothing was committed: ${listed(mismatches)}`);
    return { tables, accountsVerified: targetBalances.size };
  });
}

/** Migrations may add tables later: a table the copy does not know must stop it, not be left behind. */
async function requireKnownTables(source: Db): Promise<void> {
  const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(source);
  const bookkeeping = new Set([DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE]);
  const present = rows.map((r) => r.name).filter((name) => !name.startsWith('sqlite_') && !bookkeeping.has(name));
  const known = new Set<string>(STORE_TABLES);
  const unknown = present.filter((name) => !known.has(name));
  const missing = STORE_TABLES.filter((name) => !present.includes(name));
  if (unknown.length > 0 || missing.length > 0) {
    throw new StoreCopyError(
      `the SQLite store's tables are not the ones this version of lmgate copies (unknown: ${unknown.join(', ') || 'none'}; missing: ${missing.join(', ') || 'none'})`,
    );
  }
}

async function requireEmpty(trx: Db): Promise<void> {
  const withRows: string[] = [];
  for (const table of STORE_TABLES) {
    const row = await trx.selectFrom(table).select(sql.lit(1).as('one')).limit(1).executeTakeFirst();
    if (row) withRows.push(table);
  }
  if (withRows.length > 0) {
    throw new StoreCopyError(
      `the target database is not empty (rows in ${withRows.join(', ')}); copy only into a new database, nothing was written`,
    );
  }
}

/** The monthly partitions (partitions.ts) the rows need, made in the copy's transaction, which holds the tables' locks. */
async function makePartitions(snapshot: Db, trx: Db): Promise<void> {
  for (const table of PARTITIONED_TABLES) {
    const { rows } = await sql<{ first: string | null; last: string | null }>`select min(created_at) as first, max(created_at) as last from ${sql.table(table)}`.execute(snapshot);
    const { first, last } = rows[0] ?? {};
    if (first && last) for (const month of monthsCovering(first, last)) await monthPartitionDdl(table, month).execute(trx);
  }
}

/** Streams the table's rows out of the snapshot into multi-row inserts; returns how many. */
async function copyTable(snapshot: Db, trx: Db, table: StoreTable): Promise<number> {
  const from = snapshot as unknown as AnyDb;
  const to = trx as unknown as AnyDb;
  let batch: Row[] = [];
  let rowsPerInsert = 0;
  let copied = 0;
  const flush = async (): Promise<void> => {
    try {
      await to.insertInto(table).values(batch).execute();
    } catch (err) {
      throw new StoreCopyError(`copying ${table} failed, nothing was committed: ${(err as Error).message}`, { cause: err });
    }
    copied += batch.length;
    batch = [];
  };
  for await (const row of from.selectFrom(table).selectAll().stream()) {
    rowsPerInsert ||= Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / Object.keys(row).length)));
    batch.push(row);
    if (batch.length === rowsPerInsert) await flush();
  }
  if (batch.length > 0) await flush();
  return copied;
}

/** SQLite's AUTOINCREMENT high-water marks, which stay above ids of deleted rows (pruned change events). */
async function sqliteSequences(snapshot: Db): Promise<Map<string, number>> {
  const { rows } = await sql<{ name: string; seq: number }>`select name, seq from sqlite_sequence`.execute(snapshot);
  return new Map(rows.map((r) => [r.name, Number(r.seq)]));
}

/**
 * Rows were inserted with their ids, which does not move a serial column's sequence: set
 * each past the copied ids (and past SQLite's high-water mark), so the next insert does not
 * collide and ids keep growing where SQLite left off.
 */
async function advanceSequences(trx: Db, floors: Map<string, number>): Promise<void> {
  const { rows } = await sql<{ table_name: string; column_name: string; sequence: string | null }>`
    select table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) as sequence
    from information_schema.columns
    where table_schema = current_schema() and table_name in (${sql.join(STORE_TABLES)})`.execute(trx);
  for (const { table_name: table, column_name: column, sequence } of rows) {
    if (sequence === null) continue;
    await sql`
      select setval(${sequence}::regclass, greatest(coalesce(max(${sql.ref(column)}), 0), ${floors.get(table) ?? 0}) + 1, false)
      from ${sql.table(table)}`.execute(trx);
  }
}

async function countRows(db: Db): Promise<Map<StoreTable, number>> {
  const counts = new Map<StoreTable, number>();
  for (const table of STORE_TABLES) {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll().as('rows')).executeTakeFirstOrThrow();
    counts.set(table, Number(row.rows));
  }
  return counts;
}

/** Every account's stored balance beside the sum of its ledger entries, by account id. */
async function balancesWithLedgerSums(db: Db): Promise<Map<string, AccountBalance>> {
  const rows = await db
    .selectFrom('accounts')
    .leftJoin('ledger_entries', 'ledger_entries.account_id', 'accounts.id')
    .select(['accounts.id', 'accounts.balance_micros'])
    // PostgreSQL's sum of a BIGINT is NUMERIC, which pg hands over as text.
    .select(sql<number | string>`coalesce(sum(ledger_entries.amount_micros), 0)`.as('ledger_micros'))
    .groupBy(['accounts.id', 'accounts.balance_micros'])
    .execute();
  return new Map(rows.map((r) => [r.id, { balanceMicros: Number(r.balance_micros), ledgerMicros: Number(r.ledger_micros) }]));
}

function ledgerProblems(balances: Map<string, AccountBalance>, where: string): string[] {
  return [...balances]
    .filter(([, b]) => b.balanceMicros !== b.ledgerMicros)
    .map(([id, b]) => `account ${id} in ${where} has a balance of ${b.balanceMicros} micros but its ledger entries sum to ${b.ledgerMicros}`);
}

function balanceMismatches(source: Map<string, AccountBalance>, target: Map<string, AccountBalance>): string[] {
  const ids = new Set([...source.keys(), ...target.keys()]);
  return [...ids]
    .filter((id) => source.get(id)?.balanceMicros !== target.get(id)?.balanceMicros)
    .map((id) => `account ${id} has a balance of ${source.get(id)?.balanceMicros ?? 'nothing'} in SQLite but ${target.get(id)?.balanceMicros ?? 'nothing'} in PostgreSQL`);
}

function listed(problems: string[]): string {
  const shown = problems.slice(0, MAX_PROBLEMS_LISTED).join('; ');
  return problems.length > MAX_PROBLEMS_LISTED ? `${shown}; and ${problems.length - MAX_PROBLEMS_LISTED} more` : shown;
}
