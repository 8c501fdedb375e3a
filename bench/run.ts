// `npm run bench`: autocannon against a started lmgate (the compiled server in its own
// process) and against a bare Fastify route answering a same-sized JSON body, measured in
// the same run. Prints a table with lmgate's throughput as a ratio to the baseline.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 10);
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

async function measure(name: string, url: string, body: string, headers: Record<string, string>): Promise<Figures> {
  // Warm-up: JIT, caches, connection pool.
  await autocannon({ url, method: 'POST', body, headers, connections: CONNECTIONS, duration: 2 });
  const result = await autocannon({ url, method: 'POST', body, headers, connections: CONNECTIONS, duration: DURATION_SEC });
  return {
    name,
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.non2xx,
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
  const account = JSON.parse(cli('accounts', 'create', '--email', 'bench@lmgate.local')) as { id: string };
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

    const rows = [
      await measure('bare Fastify, same-sized JSON', `${bare.url}/v1/chat/completions`, plainBody, headers),
      await measure('lmgate demo-echo, non-streaming', `${lmgate.url}/v1/chat/completions`, plainBody, headers),
      await measure('lmgate demo-echo, streaming', `${lmgate.url}/v1/chat/completions`, streamBody, headers),
    ];
    printTable(rows, responseBytes);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function printTable(rows: Figures[], responseBytes: number): void {
  const baseline = rows[0]!.requestsPerSec;
  console.log(`\n${CONNECTIONS} connections, ${DURATION_SEC}s each, response ~${responseBytes} bytes${hasTaskset ? ', servers on core 0, load on core 1' : ''}\n`);
  console.log('| scenario | req/s | p50 ms | p99 ms | errors | vs bare |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const ratio = `${((row.requestsPerSec / baseline) * 100).toFixed(0)}%`;
    console.log(`| ${row.name} | ${row.requestsPerSec.toFixed(0)} | ${row.p50Ms} | ${row.p99Ms} | ${row.errors} | ${ratio} |`);
  }
}

await main();
