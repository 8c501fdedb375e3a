// `npm run bench`: wrk against a started lmgate (the compiled server in its own process)
// and against a bare Fastify route answering a same-sized JSON body, measured in the same
// run. Prints a table with lmgate's throughput as a ratio to the baseline. wrk (Debian's
// package) rather than a Node load generator: it needs a fraction of the CPU per request,
// so on a 2-core machine the servers, not the load generator, set the pace.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 5);
/** Scenarios run interleaved this many times; the median round is reported (VM noise). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROOT = new URL('..', import.meta.url).pathname;

interface Figures {
  name: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** Servers on core 0, the load generator on core 1 (when taskset exists and there are 2+ cores). */
const hasTaskset = spawnSync('taskset', ['-p', String(process.pid)]).status === 0;
if (hasTaskset) spawnSync('taskset', ['-cp', '1', String(process.pid)]);

function startServer(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const command = hasTaskset ? 'taskset' : process.execPath;
  const argv = hasTaskset ? ['-c', '0', process.execPath, ...args] : args;
  const child = spawn(command, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (data: Buffer) => {
      seen += data.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match) resolve({ child, url: match[1]! });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${seen}`)));
  });
}

function wrk(url: string, body: string, headers: Record<string, string>, durationSec: number, scriptDir: string): string {
  const script = join(scriptDir, 'post.lua');
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(body)}`,
      ...Object.entries(headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`),
    ].join('\n'),
  );
  const argv = ['-t1', `-c${CONNECTIONS}`, `-d${durationSec}s`, '--latency', '-s', script, url];
  const run = spawnSync(hasTaskset ? 'taskset' : 'wrk', hasTaskset ? ['-c', '1', 'wrk', ...argv] : argv, { encoding: 'utf8' });
  if (run.error || run.status !== 0) throw new Error(`wrk failed (apt-get install wrk): ${run.error?.message ?? run.stderr}`);
  return run.stdout;
}

interface Scenario {
  name: string;
  url: string;
  body: string;
}

function warmUp(scenario: Scenario, headers: Record<string, string>, scriptDir: string): void {
  wrk(scenario.url, scenario.body, headers, 2, scriptDir); // JIT, caches, connections
}

function measure({ name, url, body }: Scenario, headers: Record<string, string>, scriptDir: string): Figures {
  const out = wrk(url, body, headers, DURATION_SEC, scriptDir);
  const latencyMs = (percentile: string): number => {
    const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    if (!match) throw new Error(`no p${percentile} in wrk output:\n${out}`);
    const scale = { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
    return Number(match[1]) * scale;
  };
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? '0';
  const socketErrors = /Socket errors: (.*)/.exec(out)?.[1];
  return {
    name,
    requestsPerSec: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50Ms: latencyMs('50'),
    p99Ms: latencyMs('99'),
    errors: Number(errors) + (socketErrors ? 1 : 0),
  };
}

async function main(): Promise<void> {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');

  const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-bench-'));
  const configPath = join(dataDir, 'lmgate.yaml');
  // Limits far above what the benchmark reaches, so they are checked but never hit.
  writeFileSync(
    configPath,
    [
      'log: { level: warn }',
      'demo: { seed_account: false }',
      'tiers:',
      '  bench: { rpm: 100000000, tpm: 100000000000, concurrency: 100000, models: ["*"] }',
      'default_tier: bench',
    ].join('\n'),
  );
  const env = { LMGATE_CONFIG: configPath, LMGATE_DATA_DIR: dataDir, LMGATE_PORT: '0' };
  const cli = (...args: string[]): string => {
    const run = spawnSync(process.execPath, ['bin/lmgate.js', ...args, '--json'], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`lmgate ${args.join(' ')} failed: ${run.stderr}`);
    return run.stdout;
  };
  const account = JSON.parse(cli('accounts', 'create', '--email', 'bench@lmgate.local', '--credits', '1000000')) as { id: string };
  const { secret } = JSON.parse(cli('keys', 'create', account.id, '--name', 'bench')) as { secret: string };

  const children: ChildProcess[] = [];
  try {
    const lmgate = await startServer(['bin/lmgate.js', 'serve'], env);
    children.push(lmgate.child);
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const messages = [{ role: 'user', content: 'Hello there! Please repeat this sentence back to me, word for word.' }];
    const plainBody = JSON.stringify({ model: 'demo-echo', messages });
    const streamBody = JSON.stringify({ model: 'demo-echo', messages, stream: true });

    const sample = await fetch(`${lmgate.url}/v1/chat/completions`, { method: 'POST', headers, body: plainBody });
    if (sample.status !== 200) throw new Error(`lmgate answered ${sample.status}: ${await sample.text()}`);
    const responseBytes = (await sample.text()).length;

    const bare = await startServer(['--import', 'tsx', 'bench/bare-fastify.ts', String(responseBytes)], {});
    children.push(bare.child);

    const scenarios: Scenario[] = [
      { name: 'bare Fastify, same-sized JSON', url: `${bare.url}/v1/chat/completions`, body: plainBody },
      { name: 'lmgate demo-echo, non-streaming', url: `${lmgate.url}/v1/chat/completions`, body: plainBody },
      { name: 'lmgate demo-echo, streaming', url: `${lmgate.url}/v1/chat/completions`, body: streamBody },
    ];
    for (const scenario of scenarios) warmUp(scenario, headers, dataDir);
    const rounds = scenarios.map(() => [] as Figures[]);
    for (let round = 0; round < ROUNDS; round++) {
      scenarios.forEach((scenario, i) => rounds[i]!.push(measure(scenario, headers, dataDir)));
    }
    printTable(rounds.map(medianByThroughput), responseBytes);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function medianByThroughput(runs: Figures[]): Figures {
  const sorted = [...runs].sort((a, b) => a.requestsPerSec - b.requestsPerSec);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function printTable(rows: Figures[], responseBytes: number): void {
  const baseline = rows[0]!.requestsPerSec;
  console.log(
    `\nwrk, ${CONNECTIONS} connections, median of ${ROUNDS} interleaved ${DURATION_SEC}s rounds, response ~${responseBytes} bytes` +
      `${hasTaskset ? ', servers on core 0, load on core 1' : ''}\n`,
  );
  console.log('| scenario | req/s | p50 ms | p99 ms | errors | vs bare |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const ratio = `${((row.requestsPerSec / baseline) * 100).toFixed(0)}%`;
    console.log(`| ${row.name} | ${row.requestsPerSec.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.errors} | ${ratio} |`);
  }
}

await main();
