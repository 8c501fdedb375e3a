// A better-sqlite3 handle on the store's file, set up the same way for every connection
// (the Kysely one and the usage writer's).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { ConnectionError } from '../connection-error.js';

/** The page cache of the connection that reads: the usage indexes stay in memory longer. */
const READER_CACHE_MIB = 32;

/** `cacheMiB`: this connection's page cache (SQLite's default is 2 MiB). */
export function openSqliteHandle(path: string, cacheMiB = READER_CACHE_MIB): SqliteDatabase.Database {
  let sqlite: SqliteDatabase.Database;
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    sqlite = new SqliteDatabase(path);
  } catch (err) {
    throw new ConnectionError(
      `cannot open the SQLite store at ${path}: ${(err as Error).message} (check that its directory, LMGATE_DATA_DIR or store.data_dir, can be created and written)`,
      { cause: err },
    );
  }
  // WAL lets the CLI write while a server reads; busy_timeout makes writers queue instead
  // of failing with SQLITE_BUSY when two connections write at once.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`cache_size = -${cacheMiB * 1024}`);
  return sqlite;
}
