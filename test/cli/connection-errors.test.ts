// A database or Redis that cannot be used is said in one line: the URL without its password,
// and what to do.
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliDataDir, runCli } from '../helpers/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

const data = cliDataDir('lmgate-connection-errors-');
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  data.remove();
  await database.drop();
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function expectOneLine(run: { code: number; err: string[]; stderr: string }, line: string | RegExp): void {
  expect(run.code).toBe(1);
  expect(run.err).toHaveLength(1);
  expect(run.stderr).not.toContain('\n');
  expect(run.stderr).not.toContain('secret');
  if (typeof line === 'string') expect(run.stderr).toBe(line);
  else expect(run.stderr).toMatch(line);
}

describe('connection errors', () => {
  it('names a PostgreSQL server nothing listens on, without the password', async () => {
    const port = await closedPort();
    const run = await runCli({ ...data.env, DATABASE_URL: `postgres://lmgate:secret@127.0.0.1:${port}/lmgate` }, ['accounts', 'list']);
    expectOneLine(run, `lmgate: cannot connect to PostgreSQL at postgres://lmgate@127.0.0.1:${port}/lmgate: nothing is listening there (is the server running, on that host and port?)`);
  });

  it('names a host that does not exist', async () => {
    const run = await runCli({ ...data.env, DATABASE_URL: 'postgres://lmgate:secret@no-such-host.invalid/lmgate' }, ['migrate']);
    expectOneLine(run, 'lmgate: cannot connect to PostgreSQL at postgres://lmgate@no-such-host.invalid/lmgate: no such host (check the host name)');
  });

  it('says to create a database that does not exist', async () => {
    const url = new URL(database.url);
    url.pathname = '/lmgate_missing_database';
    url.password = 'secret';
    const run = await runCli({ ...data.env, DATABASE_URL: url.href }, ['migrate']);
    expectOneLine(run, /^lmgate: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:5432\/lmgate_missing_database has no database "lmgate_missing_database": create it first \(createdb lmgate_missing_database, or CREATE DATABASE "lmgate_missing_database"\), then start again$/);
  });

  it('says a login was refused', async () => {
    const url = new URL(database.url);
    url.username = 'lmgate_no_such_role';
    url.password = 'secret';
    const run = await runCli({ ...data.env, DATABASE_URL: url.href }, ['accounts', 'list']);
    expectOneLine(run, /^lmgate: PostgreSQL at postgres:\/\/lmgate_no_such_role@127\.0\.0\.1:5432\/\S+ refused the login: .*lmgate_no_such_role.* \(check the user and password in DATABASE_URL, and pg_hba\.conf\)$/);
  });

  it('names a SQLite store that cannot be opened, and where to change its directory', async () => {
    const run = await runCli({ ...data.env, LMGATE_DATA_DIR: '/dev/null/lmgate' }, ['accounts', 'list']);
    expectOneLine(run, /^lmgate: cannot open the SQLite store at \/dev\/null\/lmgate\/lmgate\.db: .* \(check that its directory, LMGATE_DATA_DIR or store\.data_dir, can be created and written\)$/);
  });

  it('names a Redis server nothing listens on when serve starts, and opens no port', async () => {
    const port = await closedPort();
    const run = await runCli({ ...data.env, LMGATE_PORT: '0', DATABASE_URL: database.url, REDIS_URL: `redis://:secret@127.0.0.1:${port}/2` }, ['serve']);
    expectOneLine(run, `lmgate: cannot connect to Redis at redis://127.0.0.1:${port}/2: nothing is listening there (is the server running, on that host and port?)`);
  });

  it('says Redis refused the login', async () => {
    const run = await runCli({ ...data.env, LMGATE_PORT: '0', DATABASE_URL: database.url, REDIS_URL: 'redis://lmgate:secret@127.0.0.1:6379' }, ['serve']);
    expectOneLine(run, /^lmgate: Redis at redis:\/\/lmgate@127\.0\.0\.1:6379 refused the login: .* \(check the user and password in REDIS_URL\)$/);
  });
});

