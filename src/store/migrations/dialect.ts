// Migrations use Kysely's schema builder so one file runs on SQLite and PostgreSQL; the few
// column types that differ (auto-increment ids) ask which dialect they run on.
import { PostgresAdapter, type Kysely } from 'kysely';

/** Migrations see no table types: the tables of today did not exist when they were written. */
export type MigrationDb = unknown;

export function isPostgres(db: Kysely<MigrationDb>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
