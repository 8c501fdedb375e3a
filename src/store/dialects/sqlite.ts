import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../tables.js';

/** Kysely over the file, and the raw handle for the few writes that need prepared statements. */
export function openSqlite(path: string): { db: Kysely<Database>; sqlite: SqliteDatabase.Database } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  // WAL lets the CLI write while a server reads; busy_timeout makes writers queue instead
  // of failing with SQLITE_BUSY when two processes write at once.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // 32 MiB of page cache (the default is 2 MiB): the usage indexes stay in memory longer.
  sqlite.pragma('cache_size = -32768');
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }), sqlite };
}
