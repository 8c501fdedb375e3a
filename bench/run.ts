// `npm run bench`: wrk against the compiled lmgate in its own process, with auth, rate
// limits and metering on, in two groups measured in one run:
// - demo models: lmgate's demo-echo beside a bare Fastify route answering a same-sized body;
// - upstream: a minimal mock model server measured directly, behind the thinnest node:http
//   pass-through proxy, behind a minimal Fastify + undici proxy (the framework's floor), and
//   behind lmgate; non-streaming and streaming, at concurrency 1
//   (latency, time to first chunk) and at saturation (throughput, CPU per request);
// - shared mode: demo-echo on PostgreSQL and Redis beside the embedded defaults (shared.ts).
// Scenarios run interleaved for several rounds and each figure is the median (VM noise).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureFirstChunk } from './first-chunk.js';
import { scrapeMetrics } from './lmgate-metrics.js';
import { cpuSeconds, hasTaskset, ROOT, startServer, type Server } from './processes.js';
import { createKey, writeConfig } from './setup.js';
import { BENCH_REDIS_URL, createBenchDatabase, flushBenchRedis, printShared, sharedGroup, type BenchDatabase } from './shared.js';
import { wrk, type WrkFigures } from './wrk.js';

const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Load on each scenario before measuring: until V8 has optimized the hot path (lmgate's takes ~10 s in all). */
const WARMUP_SEC = Number(process.env.BENCH_WARMUP_SEC ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Requests per round for the time-to-first-chunk figures. */
const FIRST_CHUNK_REQUESTS = Number(process.env.BENCH_FIRST_CHUNK_REQUESTS ?? 2000);
/** Which groups run: demo, upstream, shared (all by default). */
const GROUPS = new Set((process.env.BENCH_GROUPS ?? 'demo,upstream,shared').split(','));

const MESSAGES = [{ role: 'user', content: 'Hello there! Please repeat this sentence back to me, word for word.' }];

async function main(): Promise<void> {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');

  const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-bench-'));
  const servers: Server[] = [];
  let database: BenchDatabase | undefined;
  const start = async (args: string[], env?: NodeJS.ProcessEnv): Promise<Server> => {
    const server = await startServer(args, env);
    servers.push(server);
    return server;
  };
  try {
    const mock = await start(['--import', 'tsx', 'bench/mock-upstream.ts']);
    const env = writeConfig(dataDir, mock.url);
    const secret = createKey(env);
    const lmgate = await start(['bin/lmgate.js', 'serve'], env);
    const passThrough = await start(['--import', 'tsx', 'bench/pass-through-proxy.ts', mock.url]);
    const fastifyUndici = await start(['--import', 'tsx', 'bench/fastify-undici-proxy.ts', mock.url], { BENCH_KEY: secret });
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };

    const sample = await fetch(`${lmgate.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'demo-echo', messages: MESSAGES }) });
    if (sample.status !== 200) throw new Error(`lmgate answered ${sample.status}: ${await sample.text()}`);
    const responseBytes = (await sample.text()).length;
    const bare = await start(['--import', 'tsx', 'bench/bare-fastify.ts', String(responseBytes)]);

    if (GROUPS.has('demo')) printDemo(demoGroup(bare, lmgate, headers, dataDir), responseBytes);
    if (GROUPS.has('upstream')) printUpstream(await upstreamGroup({ direct: mock, passThrough, fastifyUndici, lmgate }, headers, dataDir));
    if (!GROUPS.has('shared')) return;

    // Shared mode: the same config on PostgreSQL and Redis.
    database = await createBenchDatabase();
    await flushBenchRedis();
    const sharedEnv = { ...env, DATABASE_URL: database.url, REDIS_URL: BENCH_REDIS_URL };
    const sharedSecret = createKey(sharedEnv);
    const shared = await start(['bin/lmgate.js', 'serve'], sharedEnv);
    const sharedFigures = await sharedGroup(
      [
        { name: 'embedded (SQLite, in memory)', server: lmgate, headers },
        { name: 'shared (PostgreSQL, Redis)', server: shared, headers: { ...headers, authorization: `Bearer ${sharedSecret}` } },
      ],
      JSON.stringify({ model: 'demo-echo', messages: MESSAGES }),
      { connections: CONNECTIONS, warmupSec: WARMUP_SEC, durationSec: DURATION_SEC, rounds: ROUNDS, scriptDir: dataDir },
    );
    printShared(sharedFigures, describeRounds());
  } finally {
    for (const server of servers) server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await database?.drop();
    await flushBenchRedis();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface RoundsFigures extends WrkFigures {
  /** Each round's p50, in round order (to compare paths measured back to back). */
  p50UsByRound: number[];
}

/** Each scenario measured every round, interleaved; then the median of each figure. */
function rounds<T>(scenarios: readonly T[], measure: (scenario: T) => WrkFigures): RoundsFigures[] {
  const runs = scenarios.map(() => [] as WrkFigures[]);
  for (let round = 0; round < ROUNDS; round++) scenarios.forEach((scenario, i) => runs[i]!.push(measure(scenario)));
  return runs.map((list) => ({
    requests: median(list.map((run) => run.requests)),
    requestsPerSec: median(list.map((run) => run.requestsPerSec)),
    p50Us: median(list.map((run) => run.p50Us)),
    p99Us: median(list.map((run) => run.p99Us)),
    errors: Math.max(...list.map((run) => run.errors)),
    p50UsByRound: list.map((run) => run.p50Us),
  }));
}

/** The median over rounds of a figure that compares two paths within the same round. */
function medianByRound(a: number[], b: number[], compare: (a: number, b: number) => number): number {
  return median(a.map((value, round) => compare(value, b[round]!)));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

// ---------------------------------------------------------------------------------------
// Demo models against bare Fastify.

interface DemoRow {
  name: string;
  figures: WrkFigures;
}

function demoGroup(bare: Server, lmgate: Server, headers: Record<string, string>, scriptDir: string): DemoRow[] {
  const plain = JSON.stringify({ model: 'demo-echo', messages: MESSAGES });
  const streamed = JSON.stringify({ model: 'demo-echo', messages: MESSAGES, stream: true });
  const scenarios = [
    { name: 'bare Fastify, same-sized JSON', url: `${bare.url}/v1/chat/completions`, body: plain },
    { name: 'lmgate demo-echo, non-streaming', url: `${lmgate.url}/v1/chat/completions`, body: plain },
    { name: 'lmgate demo-echo, streaming', url: `${lmgate.url}/v1/chat/completions`, body: streamed },
  ];
  const run = (scenario: (typeof scenarios)[number], durationSec: number): WrkFigures =>
    wrk({ url: scenario.url, body: scenario.body, headers, connections: CONNECTIONS, durationSec, scriptDir });
  for (const scenario of scenarios) run(scenario, WARMUP_SEC); // JIT, caches, connections
  return rounds(scenarios, (scenario) => run(scenario, DURATION_SEC)).map((figures, i) => ({ name: scenarios[i]!.name, figures }));
}

function printDemo(rows: DemoRow[], responseBytes: number): void {
  const baseline = rows[0]!.figures.requestsPerSec;
  console.log(`\n## Demo models\n\nwrk, ${CONNECTIONS} connections, ${describeRounds()}, response ~${responseBytes} bytes\n`);
  console.log('| scenario | req/s | p50 ms | p99 ms | errors | vs bare |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const { name, figures } of rows) {
    const ratio = `${((figures.requestsPerSec / baseline) * 100).toFixed(0)}%`;
    console.log(`| ${name} | ${figures.requestsPerSec.toFixed(0)} | ${ms(figures.p50Us)} | ${ms(figures.p99Us)} | ${figures.errors} | ${ratio} |`);
  }
}

// ---------------------------------------------------------------------------------------
// An upstream model server: directly, behind the pass-through, behind lmgate.

type Path = 'direct' | 'passThrough' | 'fastifyUndici' | 'lmgate';
const PATHS: Path[] = ['direct', 'passThrough', 'fastifyUndici', 'lmgate'];
const PATH_NAMES: Record<Path, string> = {
  direct: 'mock upstream, direct',
  passThrough: 'node:http pass-through',
  fastifyUndici: 'Fastify + undici, key check only',
  lmgate: 'lmgate',
};

interface UpstreamRow {
  path: Path;
  streamed: boolean;
  latency: RoundsFigures;
  saturated: RoundsFigures;
  /** CPU of the proxy process per request at saturation; null for the direct path. */
  cpuUsPerRequest: number | null;
  cpuUsByRound: number[];
  /** Time to the first chunk at concurrency 1 (streaming only). */
  firstChunkP50Us: number | null;
  firstChunkUsByRound: number[];
}

interface UpstreamFigures {
  rows: UpstreamRow[];
  /** Time lmgate's store spent writing usage records (each with its ledger entry) per record, over the saturated rounds. */
  usageWriteUsPerRecord: number;
}

async function upstreamGroup(servers: Record<Path, Server>, headers: Record<string, string>, scriptDir: string): Promise<UpstreamFigures> {
  const plain = JSON.stringify({ model: 'bench-upstream', messages: MESSAGES });
  const streamed = JSON.stringify({ model: 'bench-upstream', messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
  // The paths of one mode run back to back, so the figures compared come from the same moments of a noisy machine.
  const scenarios = [false, true].flatMap((isStream) => PATHS.map((path) => ({ path, isStream, url: `${servers[path].url}/v1/chat/completions`, body: isStream ? streamed : plain })));
  const cpu = new Map<(typeof scenarios)[number], number[]>(scenarios.map((scenario) => [scenario, []]));

  for (const scenario of scenarios) wrk({ ...scenario, headers, connections: CONNECTIONS, durationSec: WARMUP_SEC, scriptDir });
  const latency = rounds(scenarios, (scenario) => wrk({ ...scenario, headers, connections: 1, durationSec: DURATION_SEC, scriptDir }));
  const writesBefore = await usageWrites(servers.lmgate.url);
  const saturated = rounds(scenarios, (scenario) => {
    const pid = servers[scenario.path].child.pid!;
    const before = cpuSeconds(pid);
    const figures = wrk({ ...scenario, headers, connections: CONNECTIONS, durationSec: DURATION_SEC, scriptDir });
    cpu.get(scenario)!.push(((cpuSeconds(pid) - before) / figures.requests) * 1e6);
    return figures;
  });
  await new Promise((resolve) => setTimeout(resolve, 500)); // the writer's last batch
  const writesAfter = await usageWrites(servers.lmgate.url);
  const usageWriteUsPerRecord = ((writesAfter.seconds - writesBefore.seconds) / (writesAfter.records - writesBefore.records)) * 1e6;
  const firstChunk = new Map<Path, number[]>(PATHS.map((path) => [path, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const path of PATHS) {
      const figures = await measureFirstChunk(servers[path].url, '/v1/chat/completions', headers, streamed, FIRST_CHUNK_REQUESTS);
      firstChunk.get(path)!.push(figures.p50Us);
    }
  }
  const rows = scenarios.map((scenario, i) => ({
    path: scenario.path,
    streamed: scenario.isStream,
    latency: latency[i]!,
    saturated: saturated[i]!,
    cpuUsPerRequest: scenario.path === 'direct' ? null : median(cpu.get(scenario)!),
    cpuUsByRound: cpu.get(scenario)!,
    firstChunkP50Us: scenario.isStream ? median(firstChunk.get(scenario.path)!) : null,
    firstChunkUsByRound: scenario.isStream ? firstChunk.get(scenario.path)! : [],
  }));
  return { rows, usageWriteUsPerRecord };
}

async function usageWrites(lmgateUrl: string): Promise<{ seconds: number; records: number }> {
  const sample = await scrapeMetrics(lmgateUrl);
  return { seconds: sample('lmgate_usage_write_seconds_sum'), records: sample('lmgate_usage_records_written_total') };
}

function printUpstream({ rows, usageWriteUsPerRecord }: UpstreamFigures): void {
  const find = (path: Path, streamed: boolean): UpstreamRow => rows.find((row) => row.path === path && row.streamed === streamed)!;
  console.log(`\n## Upstream model server\n\nwrk at 1 and ${CONNECTIONS} connections, ${describeRounds()}; first chunk: ${FIRST_CHUNK_REQUESTS} sequential requests per round\n`);
  console.log('| path | mode | c=1 p50 µs | added µs | first chunk p50 µs | added µs | req/s | p99 ms | proxy CPU µs/req | errors |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const direct = find('direct', row.streamed);
    const added = row.path === 'direct' ? '–' : (row.latency.p50Us - direct.latency.p50Us).toFixed(0);
    const first = row.firstChunkP50Us === null ? '–' : row.firstChunkP50Us.toFixed(0);
    const firstAdded = row.firstChunkP50Us === null || row.path === 'direct' ? '–' : (row.firstChunkP50Us - direct.firstChunkP50Us!).toFixed(0);
    const cpu = row.cpuUsPerRequest === null ? '–' : row.cpuUsPerRequest.toFixed(0);
    const errors = row.latency.errors + row.saturated.errors;
    console.log(
      `| ${PATH_NAMES[row.path]} | ${row.streamed ? 'streaming' : 'non-streaming'} | ${row.latency.p50Us.toFixed(0)} | ${added} | ${first} | ${firstAdded} | ${row.saturated.requestsPerSec.toFixed(0)} | ${ms(row.saturated.p99Us)} | ${cpu} | ${errors} |`,
    );
  }
  // Each target compares two paths measured back to back in the same round, then takes
  // the median over rounds: a busy neighbour on the host inflates both sides of a pair.
  console.log('\nTargets (lmgate against the pass-through, per round, median over rounds):');
  for (const streamed of [false, true]) {
    const pass = find('passThrough', streamed);
    const floor = find('fastifyUndici', streamed);
    const gate = find('lmgate', streamed);
    const mode = streamed ? 'streaming' : 'non-streaming';
    const ratio = (a: number, b: number): number => a / b;
    const over = (a: number, b: number): number => a - b;
    const cpuRatio = medianByRound(gate.cpuUsByRound, pass.cpuUsByRound, ratio);
    console.log(`- ${mode}: CPU per request ${cpuRatio.toFixed(2)}× the pass-through's (target ≤ 1.25×) ${verdict(cpuRatio <= 1.25)}`);
    const addedOverPass = medianByRound(gate.latency.p50UsByRound, pass.latency.p50UsByRound, over);
    console.log(`- ${mode}: p50 at one connection ${addedOverPass.toFixed(0)} µs above the pass-through's (target ≤ +30 µs) ${verdict(addedOverPass <= 30)}`);
    console.log(
      `  (Fastify + undici with a key check: CPU ${medianByRound(floor.cpuUsByRound, pass.cpuUsByRound, ratio).toFixed(2)}×, p50 ${medianByRound(floor.latency.p50UsByRound, pass.latency.p50UsByRound, over).toFixed(0)} µs above the pass-through's; ` +
        `lmgate's own work over it: ${medianByRound(gate.cpuUsByRound, floor.cpuUsByRound, over).toFixed(0)} µs CPU, ${medianByRound(gate.latency.p50UsByRound, floor.latency.p50UsByRound, over).toFixed(0)} µs p50)`,
    );
    if (streamed) {
      const firstOverPass = medianByRound(gate.firstChunkUsByRound, pass.firstChunkUsByRound, over);
      console.log(`- streaming: time to first chunk ${firstOverPass.toFixed(0)} µs above the pass-through's (target ≤ +50 µs) ${verdict(firstOverPass <= 50)}`);
    }
  }
  // Part of lmgate's CPU per request, written in batches off the request path (lmgate_usage_write_seconds).
  console.log(`\nlmgate's usage write (record and ledger entry, in batches): ${usageWriteUsPerRecord.toFixed(1)} µs per request at saturation`);
}

function verdict(met: boolean): string {
  return met ? 'met' : 'MISSED';
}

function describeRounds(): string {
  return `median of ${ROUNDS} interleaved ${DURATION_SEC}s rounds${hasTaskset ? ', servers on core 0, wrk on core 1' : ''}`;
}

function ms(us: number): string {
  return (us / 1000).toFixed(2);
}

await main();
