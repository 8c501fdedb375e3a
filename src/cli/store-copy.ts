// lmgate store copy --to postgres://...
//
// Moves an operator from the embedded SQLite file to PostgreSQL in one step: the file the
// other commands use when no DATABASE_URL is set (store.sqlite_path, or lmgate.db in the
// data directory) is copied whole into an empty PostgreSQL database, verified, and only
// then committed. The server should be stopped first: what it writes after the copy's
// snapshot stays behind in the file.
import { existsSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { findConnectionError } from '../store/connection-error.js';
import { copyStore, StoreCopyError, type StoreCopyReport } from '../store/copy.js';
import { openPostgres } from '../store/dialects/postgres.js';
import { openSqlite } from '../store/dialects/sqlite.js';
import { KyselyStore } from '../store/kysely-store.js';
import { stringFlag, type ParsedCommand } from './args.js';
import { CliError, storeLocation, type CliIo } from './context.js';
import { printTable } from './output.js';

const TARGET_EXAMPLE = 'postgres://user@host:5432/database';

export async function storeCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ...rest] = args.positionals;
  if (action !== 'copy') throw new CliError(`store: expected copy --to ${TARGET_EXAMPLE}`);
  if (rest.length > 0) throw new CliError(`store copy: unexpected ${JSON.stringify(rest[0])}`);
  const targetUrl = parseTarget(stringFlag(args, 'to'));
  const { sqlitePath } = storeLocation(config);
  // Opening a missing file would create an empty store and copy nothing.
  if (sqlitePath === ':memory:' || !existsSync(sqlitePath)) {
    throw new CliError(`store copy: no SQLite store at ${sqlitePath} (store.sqlite_path, or lmgate.db in the data directory)`);
  }

  const source = openKyselyStore(openSqlite(sqlitePath));
  const target = openKyselyStore(openPostgres(targetUrl.href));
  try {
    // Both at the latest version, so their tables and columns are the same.
    await source.migrate();
    try {
      await target.migrate();
    } catch (err) {
      const unreachable = findConnectionError(err);
      throw new CliError(unreachable ? `store copy: ${unreachable.message}` : `store copy: cannot prepare ${describeTarget(targetUrl)}: ${(err as Error).message}`);
    }
    const report = await copyStore(source.db, target.db).catch((err: unknown) => {
      throw err instanceof StoreCopyError ? new CliError(`store copy: ${err.message}`) : err;
    });
    printReport(io, args.json, sqlitePath, describeTarget(targetUrl), report);
    return 0;
  } finally {
    await Promise.all([source.close(), target.close()]);
  }
}

function openKyselyStore({ db, dialect }: ReturnType<typeof openSqlite>): KyselyStore {
  return new KyselyStore(db, dialect, false);
}

function parseTarget(text: string | undefined): URL {
  if (text === undefined || text.trim() === '') {
    throw new CliError(`store copy needs --to ${TARGET_EXAMPLE}: the PostgreSQL database to copy the SQLite store into`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not echoed: the text may hold a password.
    throw new CliError(`store copy --to is not a URL; expected ${TARGET_EXAMPLE}`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new CliError(`store copy --to must name a PostgreSQL database (${TARGET_EXAMPLE}), not a ${url.protocol}// URL`);
  }
  return url;
}

/** The target without its password or query, fit to print. */
function describeTarget(url: URL): string {
  const user = url.username ? `${url.username}@` : '';
  return `${url.protocol}//${user}${url.host}${url.pathname}`;
}

function printReport(io: CliIo, json: boolean, source: string, target: string, report: StoreCopyReport): void {
  const rows = report.tables.reduce((sum, t) => sum + t.rows, 0);
  if (json) {
    const tables = Object.fromEntries(report.tables.map((t) => [t.table, t.rows]));
    io.out(JSON.stringify({ source, target, tables, rows, accounts_verified: report.accountsVerified }));
    return;
  }
  io.out(`copied ${source} to ${target}`);
  io.out('');
  printTable(io, false, report.tables, ['table', 'rows']);
  io.out('');
  io.out(`verified: ${rows} rows, each table's count equal on both stores; ${report.accountsVerified} accounts' balances equal the sums of their ledger entries`);
  io.out('Start lmgate with DATABASE_URL set to this database.');
}
