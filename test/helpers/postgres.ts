// A fresh PostgreSQL database per suite on the local server, dropped afterwards. A missing
// server fails the suite (it is never skipped).
import pg from 'pg';
import { randomBytes } from 'node:crypto';

const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `lmgate_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        // pg's Pool.end() resolves once it asked its clients to end, not once the server
        // closed their sessions; a forced drop in that window kills them and the pool
        // raises the FATAL as an unhandled error. Wait (bounded) for them to be gone.
        for (let attempt = 0; attempt < 500; attempt++) {
          const { rows } = await client.query<{ sessions: number }>(
            'select count(*)::int as sessions from pg_stat_activity where datname = $1',
            [name],
          );
          if (rows[0]?.sessions === 0) break;
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
