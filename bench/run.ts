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
import { eventLoopDelay, scrapeMetrics, type EventLoopDelayMs } from './lmgate-metrics.js';
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
/**
 * lmgate alone at saturation for the event loop's delay: longer than the two minutes its
 * /metrics window can span, so the window read holds nothing but this load.
 */
const LOOP_SEC = Number(process.env.BENCH_LOOP_SEC ?? 125);

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
  /** Each round's p50 and p99, in round order (to compare paths measured back to back). */
  p50UsByRound: number[];
  p99UsByRound: number[];
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
    p99UsByRound: list.map((run) => run.p99Us),
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
  const echo = rows[1]!.figures.requestsPerSec / baseline;
  console.log(`\n- lmgate demo-echo, non-streaming: ${(echo * 100).toFixed(0)}% of bare Fastify's req/s (target ≥ 50%) ${verdict(echo >= 0.5)}`);
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
  /** lmgate's event-loop delay over LOOP_SEC alone at saturation (non-streaming). */
  loop: EventLoopDelayMs & { requestsPerSec: number };
  /** CPU of lmgate's usage write thread per record (each with its ledger entry), over the saturated rounds. */
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
  const gate = scenarios.find((scenario) => scenario.path === 'lmgate' && !scenario.isStream)!;
  const alone = wrk({ ...gate, headers, connections: CONNECTIONS, durationSec: LOOP_SEC, scriptDir });
  const loop = { ...(await eventLoopDelay(servers.lmgate.url)), requestsPerSec: alone.requestsPerSec };
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
  return { rows, usageWriteUsPerRecord, loop };
}

async function usageWrites(lmgateUrl: string): Promise<{ seconds: number; records: number }> {
  const sample = await scrapeMetrics(lmgateUrl);
  return { seconds: sample('lmgate_usage_write_thread_cpu_seconds_total'), records: sample('lmgate_usage_records_written_total') };
}

function printUpstream({ rows, usageWriteUsPerRecord, loop }: UpstreamFigures): void {
  const find = (path: Path, streamed: boolean): UpstreamRow => rows.find((row) => row.path === path && row.streamed === streamed)!;
  console.log(`\n## Upstream model server\n\nwrk at 1 and ${CONNECTIONS} connections, ${describeRounds()}; first chunk: ${FIRST_CHUNK_REQUESTS} sequential requests per round\n`);
  console.log('| path | mode | c=1 p50 µs | added µs | c=1 p99 ms | first chunk p50 µs | added µs | req/s | p99 ms | proxy CPU µs/req | errors |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const direct = find('direct', row.streamed);
    const added = row.path === 'direct' ? '–' : (row.latency.p50Us - direct.latency.p50Us).toFixed(0);
    const first = row.firstChunkP50Us === null ? '–' : row.firstChunkP50Us.toFixed(0);
    const firstAdded = row.firstChunkP50Us === null || row.path === 'direct' ? '–' : (row.firstChunkP50Us - direct.firstChunkP50Us!).toFixed(0);
    const cpu = row.cpuUsPerRequest === null ? '–' : row.cpuUsPerRequest.toFixed(0);
    const errors = row.latency.errors + row.saturated.errors;
    console.log(
      `| ${PATH_NAMES[row.path]} | ${row.streamed ? 'streaming' : 'non-streaming'} | ${row.latency.p50Us.toFixed(0)} | ${added} | ${ms(row.latency.p99Us)} | ${first} | ${firstAdded} | ${row.saturated.requestsPerSec.toFixed(0)} | ${ms(row.saturated.p99Us)} | ${cpu} | ${errors} |`,
    );
  }
  // Each target compares two paths measured back to back in the same round, then takes
  // the median over rounds: a busy neighbour on the host inflates both sides of a pair.
  // Latency is compared as what each proxy adds over the direct path.
  console.log('\nTargets (lmgate against the node:http pass-through, per round, median over rounds):');
  const ratio = (a: number, b: number): number => a / b;
  const over = (a: number, b: number): number => a - b;
  for (const streamed of [false, true]) {
    const direct = find('direct', streamed);
    const pass = find('passThrough', streamed);
    const floor = find('fastifyUndici', streamed);
    const gate = find('lmgate', streamed);
    const mode = streamed ? 'streaming' : 'non-streaming';
    const added = (row: UpstreamRow): number[] => row.latency.p50UsByRound.map((p50, round) => p50 - direct.latency.p50UsByRound[round]!);
    const cpuRatio = medianByRound(gate.cpuUsByRound, pass.cpuUsByRound, ratio);
    console.log(`- ${mode}: CPU per request ${cpuRatio.toFixed(2)}× the pass-through's (target ≤ 1.25×) ${verdict(cpuRatio <= 1.25)}`);
    const addedRatio = medianByRound(added(gate), added(pass), ratio);
    console.log(`- ${mode}: added p50 at one connection ${addedRatio.toFixed(2)}× the pass-through's (target ≤ 1.3×) ${verdict(addedRatio <= 1.3)}`);
    const tailRatio = medianByRound(gate.latency.p99UsByRound, pass.latency.p99UsByRound, ratio);
    console.log(`- ${mode}: p99 at one connection ${tailRatio.toFixed(2)}× the pass-through's (target ≤ 2×) ${verdict(tailRatio <= 2)}`);
    const saturatedRatio = medianByRound(gate.saturated.p99UsByRound, pass.saturated.p99UsByRound, ratio);
    console.log(`- ${mode}: p99 at saturation ${saturatedRatio.toFixed(2)}× the pass-through's (target ≤ 1.5×) ${verdict(saturatedRatio <= 1.5)}`);
    if (streamed) {
      const firstAdded = (row: UpstreamRow): number[] => row.firstChunkUsByRound.map((first, round) => first - direct.firstChunkUsByRound[round]!);
      const firstRatio = medianByRound(firstAdded(gate), firstAdded(pass), ratio);
      console.log(`- streaming: added time to first chunk ${firstRatio.toFixed(2)}× the pass-through's (target ≤ 1.3×) ${verdict(firstRatio <= 1.3)}`);
    }
    console.log(
      `  (Fastify + undici with a key check: CPU ${medianByRound(floor.cpuUsByRound, pass.cpuUsByRound, ratio).toFixed(2)}×, added p50 ${medianByRound(added(floor), added(pass), ratio).toFixed(2)}× the pass-through's; ` +
        `lmgate's own work over it: ${medianByRound(gate.cpuUsByRound, floor.cpuUsByRound, over).toFixed(0)} µs CPU, ${medianByRound(gate.latency.p50UsByRound, floor.latency.p50UsByRound, over).toFixed(0)} µs p50)`,
    );
  }
  console.log(
    `- event-loop delay, lmgate alone at saturation for ${LOOP_SEC} s (${loop.requestsPerSec.toFixed(0)} req/s): p50 ${loop.p50Ms.toFixed(2)} ms, ` +
      `p99 ${loop.p99Ms.toFixed(2)} ms, max ${loop.maxMs.toFixed(1)} ms (target p99 < 5 ms) ${verdict(loop.p99Ms < 5)}`,
  );
  // Part of lmgate's CPU per request, written in batches on a thread of its own (lmgate_usage_write_thread_cpu_seconds_total).
  console.log(`\nlmgate's usage write (record and ledger entry, in batches, on its own thread): ${usageWriteUsPerRecord.toFixed(1)} µs of that thread's CPU per request at saturation`);
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
