// Start and stop as an operator meets them: a taken port, signals at each stage of a start,
// the port chosen by flag or environment, and `npm start` stopped through npm's PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/postgres.js';
import { startServer } from '../helpers/server-process.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const dirs: string[] = [];
const children: ChildProcess[] = [];
const servers: Server[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const server of servers) server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'lmgate-start-stop-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'lmgate.yaml'), 'log: { level: warn }\n');
  return { dir, env: { LMGATE_CONFIG: join(dir, 'lmgate.yaml'), LMGATE_DATA_DIR: dir } };
}

interface Run {
  child: ChildProcess;
  output(): string;
  /** performance.now() when the output last grew. */
  lastOutputAtMs(): number;
  exited: Promise<{ code: number | string; atMs: number }>;
}

function run(command: string, args: string[], env: Record<string, string>, cwd = ROOT): Run {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  let lastAtMs = performance.now();
  const onData = (data: Buffer): void => {
    output += data.toString();
    lastAtMs = performance.now();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | string; atMs: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code: code ?? signal ?? -1, atMs: performance.now() })),
  );
  return { child, output: () => output, lastOutputAtMs: () => lastAtMs, exited };
}

function serve(env: Record<string, string>, args: string[] = []): Run {
  return run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', ...args], { LMGATE_PORT: '0', ...env });
}

/** A TCP server that accepts connections and never answers: a database or Redis that hangs. */
async function silentServer(): Promise<{ port: number; connected: Promise<Socket> }> {
  const server = createServer();
  servers.push(server);
  const connected = new Promise<Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connected };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a taken port', () => {
  it('prints one line naming the address and how to choose another, exits non-zero at once, seeds nothing; the next start prints the demo key', async () => {
    const { dir, env } = dataDir();
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;

    const failed = serve({ ...env, LMGATE_PORT: String(port) });
    const { code, atMs } = await failed.exited;
    expect(code).toBe(1);
    const lines = failed.output().trimEnd().split('\n');
    expect(lines).toEqual([
      `lmgate: cannot listen on 127.0.0.1:${port}: the port is in use (is lmgate already running?); choose another port with --port N, PORT or LMGATE_PORT, or server.port in lmgate.yaml`,
    ]);
    // Nothing kept it alive once it said why.
    expect(atMs - failed.lastOutputAtMs()).toBeLessThan(1_000);
    expect(existsSync(join(dir, 'lmgate.db'))).toBe(false);

    await new Promise((resolve) => taken.close(resolve));
    const started = await startServer({ ...env, LMGATE_PORT: String(port) }, /sk-lmg-[0-9A-Za-z]{49}\n/);
    expect(started.origin).toBe(`http://127.0.0.1:${port}`);
    expect(started.output()).toContain('Demo account demo@lmgate.local created with this API key');
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
  }, 60_000);
});

describe('a signal while starting', () => {
  it('SIGTERM ends a start that waits on a PostgreSQL server which does not answer', async () => {
    const { env } = dataDir();
    const database = await silentServer();
    const starting = serve({ ...env, DATABASE_URL: `postgres://lmgate:secret@127.0.0.1:${database.port}/lmgate` });
    await database.connected;
    const signalledAtMs = performance.now();
    starting.child.kill('SIGTERM');
    const { code, atMs } = await starting.exited;
    expect(code).toBe(143);
    expect(atMs - signalledAtMs).toBeLessThan(1_000);
    expect(starting.output()).toContain('lmgate: stopped by SIGTERM while starting');
  });

  it('SIGINT ends a start that waits for the migration lock another process holds', async () => {
    const { env } = dataDir();
    const database = await createTestDatabase();
    // Kysely's migrator takes this session lock on PostgreSQL (kysely/dist/esm/dialect/postgres/postgres-adapter.js).
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock(3853314791062309107)');
      const starting = serve({ ...env, DATABASE_URL: database.url });
      // Waiting on the lock: its session shows up in pg_locks, not granted.
      for (;;) {
        const { rows } = await holder.query<{ waiting: number }>("select count(*)::int as waiting from pg_locks where locktype = 'advisory' and not granted");
        if (rows[0]!.waiting > 0) break;
      }
      const signalledAtMs = performance.now();
      starting.child.kill('SIGINT');
      const { code, atMs } = await starting.exited;
      expect(code).toBe(130);
      expect(atMs - signalledAtMs).toBeLessThan(1_000);
      expect(starting.output()).toContain('lmgate: stopped by SIGINT while starting');
    } finally {
      await holder.end();
      await database.drop();
    }
  });

  it('SIGTERM ends a start that waits on a Redis server which does not answer', async () => {
    const { env } = dataDir();
    const database = await createTestDatabase();
    try {
      const redis = await silentServer();
      const starting = serve({ ...env, DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${redis.port}` });
      await redis.connected;
      const signalledAtMs = performance.now();
      starting.child.kill('SIGTERM');
      const { code, atMs } = await starting.exited;
      expect(code).toBe(143);
      expect(atMs - signalledAtMs).toBeLessThan(1_000);
    } finally {
      await database.drop();
    }
  });
});

describe('the port', () => {
  it('is taken from serve --port over LMGATE_PORT, and --host names the address', async () => {
    const { env } = dataDir();
    const port = await freePort();
    const server = await startServer({ ...env, LMGATE_PORT: '1' }, undefined, ['--port', String(port), '--host', '127.0.0.1']);
    expect(server.origin).toBe(`http://127.0.0.1:${port}`);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('is taken from PORT when LMGATE_PORT is not set', async () => {
    const { env } = dataDir();
    const port = await freePort();
    const server = await startServer({ ...env, LMGATE_PORT: '', PORT: String(port) });
    expect(server.origin).toBe(`http://127.0.0.1:${port}`);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});

describe('npm start', () => {
  it('stops the server when npm’s own PID gets SIGTERM', async () => {
    const { dir, env } = dataDir();
    // The project's start script as written, run by npm, with bin/lmgate.js replaced by
    // one that runs the sources (dist/ may be older than them).
    const project = join(dir, 'project');
    mkdirSync(join(project, 'bin'), { recursive: true });
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'start-script', version: '0.0.0', type: 'module', scripts: { start: scripts.start } }));
    writeFileSync(join(project, 'bin', 'lmgate.js'), `await import(${JSON.stringify(pathToFileURL(join(ROOT, 'src/main.ts')).href)});\n`);
    const tsx = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/esm/index.mjs')).href;
    const npm = run('npm', ['start', '--silent'], { ...env, LMGATE_PORT: '0', NODE_OPTIONS: `--import=${tsx}` }, project);
    for (;;) {
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(npm.output());
      if (match) break;
      await Promise.race([npm.exited, new Promise((resolve) => npm.child.stdout!.once('data', resolve))]);
      if (npm.child.exitCode !== null) throw new Error(`npm start ended: ${npm.output()}`);
    }
    const origin = /listening on (http:\/\/[\d.]+:\d+)/.exec(npm.output())![1]!;
    npm.child.kill('SIGTERM');
    await npm.exited;
    // The server is gone with npm: its port refuses connections.
    await expect(fetch(`${origin}/healthz`)).rejects.toThrow();
    expect(npm.output()).toContain('lmgate shutting down');
  }, 60_000);
});
