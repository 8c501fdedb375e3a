// The shared-mode group of `npm run bench`: lmgate's demo-echo on its embedded defaults
// (SQLite, state in memory) beside lmgate in shared mode (PostgreSQL, Redis), CPU per
// request of each, and the Redis commands a request costs, from INFO commandstats.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { cpuSeconds, type Server } from './processes.js';
import { wrk, type WrkFigures } from './wrk.js';

/** A database index of the bench's own, emptied before and after. */
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `lmgate_bench_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** The server's version and the settings a write-heavy figure depends on, as one line. */
export async function postgresSettings(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const names = ['server_version', 'shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'synchronous_commit'];
    const { rows } = await client.query<{ name: string; setting: string }>(
      `select name, current_setting(name) as setting from unnest($1::text[]) as name`,
      [names],
    );
    return rows.map((row) => `${row.name} ${row.setting}`).join(', ');
  } finally {
    await client.end();
  }
}

export async function flushBenchRedis(): Promise<void> {
  const redis = new Redis(BENCH_REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
}

export interface SharedRow {
  name: string;
  figures: WrkFigures;
  cpuUsPerRequest: number;
  cpuUsByRound: number[];
}

export interface SharedFigures {
  rows: [embedded: SharedRow, shared: SharedRow];
  /** Redis commands per request in shared mode, by command, over the measured rounds. */
  redisCallsPerRequest: Map<string, number>;
  /** CPU per shared-mode request spent by the Redis and PostgreSQL servers (µs, all rounds). */
  redisCpuUsPerRequest: number;
  postgresCpuUsPerRequest: number;
}

export interface SharedScenario {
  name: string;
  server: Server;
  headers: Record<string, string>;
}

export async function sharedGroup(
  scenarios: [SharedScenario, SharedScenario],
  body: string,
  settings: { connections: number; warmupSec: number; durationSec: number; rounds: number; scriptDir: string },
): Promise<SharedFigures> {
  const run = (scenario: SharedScenario, durationSec: number): WrkFigures =>
    wrk({ url: `${scenario.server.url}/v1/chat/completions`, body, headers: scenario.headers, connections: settings.connections, durationSec, scriptDir: settings.scriptDir });
  for (const scenario of scenarios) run(scenario, settings.warmupSec);

  const redis = new Redis(BENCH_REDIS_URL);
  const cpu = scenarios.map(() => [] as number[]);
  const figures = scenarios.map(() => [] as WrkFigures[]);
  let sharedRequests = 0;
  let redisCpu = 0;
  let postgresCpu = 0;
  const before = await commandStats(redis);
  for (let round = 0; round < settings.rounds; round++) {
    for (const [i, scenario] of scenarios.entries()) {
      const pid = scenario.server.child.pid!;
      const started = cpuSeconds(pid);
      const redisStarted = await redisCpuSeconds(redis);
      const postgresStarted = postgresCpuSeconds();
      const result = run(scenario, settings.durationSec);
      cpu[i]!.push(((cpuSeconds(pid) - started) / result.requests) * 1e6);
      figures[i]!.push(result);
      if (i === 1) {
        sharedRequests += result.requests;
        redisCpu += (await redisCpuSeconds(redis)) - redisStarted;
        postgresCpu += postgresCpuSeconds() - postgresStarted;
      }
    }
  }
  // The usage stream's writer catches up within a few hundred milliseconds.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const after = await commandStats(redis);
  redis.disconnect();
  const redisCallsPerRequest = new Map<string, number>();
  for (const [command, calls] of after) {
    const added = calls - (before.get(command) ?? 0);
    if (added > 0 && command !== 'info') redisCallsPerRequest.set(command, added / sharedRequests);
  }
  const row = (i: number): SharedRow => ({
    name: scenarios[i]!.name,
    figures: medianFigures(figures[i]!),
    cpuUsPerRequest: median(cpu[i]!),
    cpuUsByRound: cpu[i]!,
  });
  return {
    rows: [row(0), row(1)],
    redisCallsPerRequest,
    redisCpuUsPerRequest: (redisCpu / sharedRequests) * 1e6,
    postgresCpuUsPerRequest: (postgresCpu / sharedRequests) * 1e6,
  };
}

export function printShared({ rows, redisCallsPerRequest, redisCpuUsPerRequest, postgresCpuUsPerRequest }: SharedFigures, describeRounds: string): void {
  console.log(`\n## Shared mode (PostgreSQL + Redis) against the embedded defaults\n\nlmgate demo-echo, non-streaming, ${describeRounds}\n`);
  console.log('| lmgate | req/s | p50 ms | p99 ms | CPU µs/req | errors |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const { name, figures, cpuUsPerRequest } of rows) {
    console.log(`| ${name} | ${figures.requestsPerSec.toFixed(0)} | ${(figures.p50Us / 1000).toFixed(2)} | ${(figures.p99Us / 1000).toFixed(2)} | ${cpuUsPerRequest.toFixed(0)} | ${figures.errors} |`);
  }
  const [embedded, shared] = rows;
  const ratio = median(shared.cpuUsByRound.map((value, round) => value / embedded.cpuUsByRound[round]!));
  console.log(`\n- CPU per request in shared mode ${ratio.toFixed(2)}× the embedded mode's (per round, median; target ≤ 1.3×) ${ratio <= 1.3 ? 'met' : 'MISSED'}`);
  const calls = [...redisCallsPerRequest].sort((a, b) => b[1] - a[1]).map(([command, n]) => `${command} ${n.toFixed(3)}`);
  console.log(`- Redis commands per request (INFO commandstats): ${calls.join(', ')}`);
  const scripts = (redisCallsPerRequest.get('evalsha') ?? 0) + (redisCallsPerRequest.get('eval') ?? 0);
  console.log(
    `  script calls per request ${scripts.toFixed(3)}: a request waits for one, its admission before the model (ADMIT), and is settled after the answer (SETTLE); ` +
      `each call carries the admissions or settlements of one turn of the event loop, so under load there are fewer calls than requests; ` +
      `the rest is the usage stream's writer, in batches`,
  );
  console.log(
    `- outside lmgate, per shared-mode request: Redis ${redisCpuUsPerRequest.toFixed(0)} µs CPU, PostgreSQL ${postgresCpuUsPerRequest.toFixed(0)} µs ` +
      `(all of its processes, usage batches included; the embedded mode's SQLite writes are inside its own figure)`,
  );
}

/** The Redis server's CPU so far (INFO cpu: user + system). */
async function redisCpuSeconds(redis: Redis): Promise<number> {
  const text = await redis.info('cpu');
  const read = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0);
  return read('used_cpu_user') + read('used_cpu_sys');
}

/** The CPU so far of every PostgreSQL server process on this machine (0 when none is local). */
export function postgresCpuSeconds(): number {
  const pids = spawnSync('pgrep', ['-x', 'postgres'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  let total = 0;
  for (const pid of pids) {
    try {
      total += cpuSeconds(Number(pid));
    } catch {
      // a backend that exited between pgrep and the read
    }
  }
  return total;
}

async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const text = await redis.info('commandstats');
  const stats = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) stats.set(match[1]!, Number(match[2]));
  return stats;
}

function medianFigures(list: WrkFigures[]): WrkFigures {
  return {
    requests: median(list.map((f) => f.requests)),
    requestsPerSec: median(list.map((f) => f.requestsPerSec)),
    p50Us: median(list.map((f) => f.p50Us)),
    p99Us: median(list.map((f) => f.p99Us)),
    errors: Math.max(...list.map((f) => f.errors)),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
