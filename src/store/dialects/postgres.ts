import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../tables.js';

const INT8_OID = 20;

export function openPostgres(connectionString: string): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    // BIGINT (micro-credits, counts) arrives as a string by default; amounts stay far
    // below 2^53, and money.ts checks that where values enter.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
