// `BENCH_BASELINE=/path/to/other/checkout npm run bench:compare`: this checkout's lmgate
// against another's (built there, e.g. a worktree at an earlier commit), on the same config
// and mock upstream, in alternating rounds, so that both are measured in the same moments
// of a noisy machine. Reports, per path, req/s, p50, p99 and CPU per request of each, and the
// ratio of their CPU per request, round by round and as a median.
//   BENCH_ROUNDS (5), BENCH_DURATION_SEC (5), BENCH_WARMUP_SEC (5), BENCH_CONNECTIONS (32),
//   BENCH_CANDIDATE (this checkout) to measure another, BENCH_PATHS (all) a comma list of
//   path names to keep (echo, upstream, streaming), BENCH_NODE_ARGS_BASELINE and
//   BENCH_NODE_ARGS_CURRENT node flags for each (e.g. one checkout with and without a V8 flag).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, ROOT, startServer, type Server } from './processes.js';
import { createKey, writeConfig } from './setup.js';
import { wrk } from './wrk.js';

const BASELINE = process.env.BENCH_BASELINE;
const CANDIDATE = process.env.BENCH_CANDIDATE ?? ROOT;
const PATH_FILTER = process.env.BENCH_PATHS?.split(',');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 5);
const WARMUP_SEC = Number(process.env.BENCH_WARMUP_SEC ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const NODE_ARGS: Record<string, string[]> = {
  baseline: process.env.BENCH_NODE_ARGS_BASELINE?.split(' ').filter(Boolean) ?? [],
  current: process.env.BENCH_NODE_ARGS_CURRENT?.split(' ').filter(Boolean) ?? [],
};
const MESSAGES = [{ role: 'user', content: 'Hello there! Please repeat this sentence back to me, word for word.' }];

const PATHS = [
  { key: 'echo', name: 'demo-echo, non-streaming', body: { model: 'demo-echo', messages: MESSAGES } },
  { key: 'upstream', name: 'upstream, non-streaming', body: { model: 'bench-upstream', messages: MESSAGES } },
  { key: 'streaming', name: 'upstream, streaming', body: { model: 'bench-upstream', messages: MESSAGES, stream: true, stream_options: { include_usage: true } } },
].filter((path) => !PATH_FILTER || PATH_FILTER.includes(path.key));

async function main(): Promise<void> {
  if (!BASELINE) throw new Error('BENCH_BASELINE names the checkout to compare with');
  const checkouts = { baseline: BASELINE, current: CANDIDATE };
  for (const dir of Object.values(checkouts)) {
    if (spawnSync('npm', ['run', 'build'], { cwd: dir, stdio: 'inherit' }).status !== 0) throw new Error(`build failed in ${dir}`);
  }
  const servers: Server[] = [];
  const dirs: string[] = [];
  try {
    const mock = await startServer(['--import', 'tsx', 'bench/mock-upstream.ts']);
    servers.push(mock);
    const started: Record<string, { server: Server; secret: string }> = {};
    for (const [name, dir] of Object.entries(checkouts)) {
      const dataDir = mkdtempSync(join(tmpdir(), `lmgate-compare-${name}-`));
      dirs.push(dataDir);
      const env = writeConfig(dataDir, mock.url);
      const secret = createKey(env, dir);
      const server = await startServer([...NODE_ARGS[name]!, join(dir, 'bin/lmgate.js'), 'serve'], env);
      servers.push(server);
      started[name] = { server, secret };
    }
    const scriptDir = dirs[0]!;
    const runs = PATHS.flatMap((path) =>
      Object.entries(started).map(([checkout, { server, secret }]) => ({
        path: path.name,
        checkout,
        pid: server.child.pid!,
        run: { url: `${server.url}/v1/chat/completions`, body: JSON.stringify(path.body), headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, connections: CONNECTIONS, scriptDir },
        cpu: [] as number[],
        rps: [] as number[],
        p50: [] as number[],
        p99: [] as number[],
      })),
    );
    for (const each of runs) wrk({ ...each.run, durationSec: WARMUP_SEC });
    for (let round = 0; round < ROUNDS; round++) {
      for (const each of runs) {
        const before = cpuSeconds(each.pid);
        const figures = wrk({ ...each.run, durationSec: DURATION_SEC });
        if (figures.errors > 0) throw new Error(`${each.checkout} ${each.path}: ${figures.errors} errors`);
        each.cpu.push(((cpuSeconds(each.pid) - before) / figures.requests) * 1e6);
        each.rps.push(figures.requestsPerSec);
        each.p50.push(figures.p50Us);
        each.p99.push(figures.p99Us);
      }
    }
    const label = (name: string): string => [checkouts[name as keyof typeof checkouts], ...NODE_ARGS[name]!].join(' ');
    console.log(`\n## ${label('current')} against ${label('baseline')}\n\nwrk, ${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION_SEC}s rounds\n`);
    console.log('| path | checkout | req/s | p50 ms | p99 ms | CPU µs/req | CPU per round |');
    console.log('|---|---|---:|---:|---:|---:|---|');
    for (const each of runs) {
      console.log(`| ${each.path} | ${each.checkout} | ${median(each.rps).toFixed(0)} | ${(median(each.p50) / 1000).toFixed(2)} | ${(median(each.p99) / 1000).toFixed(2)} | ${median(each.cpu).toFixed(0)} | ${each.cpu.map((v) => v.toFixed(0)).join(' ')} |`);
    }
    console.log('');
    for (const path of PATHS) {
      const [baseline, current] = ['baseline', 'current'].map((checkout) => runs.find((each) => each.path === path.name && each.checkout === checkout)!);
      const ratios = current!.cpu.map((cpu, round) => cpu / baseline!.cpu[round]!);
      console.log(`- ${path.name}: CPU per request current/baseline ${median(ratios).toFixed(2)}× (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})`);
    }
  } finally {
    for (const server of servers) server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

await main();
