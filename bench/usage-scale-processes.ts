// The child processes of `npm run bench:usage-scale`: the steady API traffic during the load
// (usage-scale-api-load.ts), and the export timed with its peak resident memory, by
// `lmgate usage export` when the checkout has it, else by store.exportUsage
// (usage-scale-export.ts), each a process of its own so its memory is its own.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { memoryBytes, ROOT, type Server } from './processes.js';
import type { ApiLoadFigures } from './usage-scale-api-load.js';

const TIME = '/usr/bin/time';
/** Errors the server logs are printed, up to this many: a failing read says why. */
const ERRORS_SHOWN = 5;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface ApiLoad {
  /** Ends the traffic; its figures over the whole time it ran. */
  stop(): Promise<ApiLoadFigures>;
}

export function startApiLoad(url: string, apiKey: string, perSec: number): ApiLoad {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/usage-scale-api-load.ts', url, apiKey, String(perSec)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (data: Buffer) => (out += data.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`the API load exited with ${code}: ${out}`);
      return JSON.parse(out) as ApiLoadFigures;
    },
  };
}

export interface ExportFigures {
  /** What exported: the CLI, or the store's method (and why). */
  how: string;
  seconds: number;
  peakRssBytes: number;
  rows?: number;
}

export async function timeExport(databaseUrl: string, dataDir: string, range: { fromMs: number; nowMs: number; accountId?: string }): Promise<ExportFigures> {
  const from = new Date(range.fromMs).toISOString().slice(0, 10);
  const to = new Date(range.nowMs).toISOString().slice(0, 10);
  const entry = process.env.BENCH_CLI === 'dist' ? ['bin/lmgate.js'] : ['--import', 'tsx', 'src/main.ts'];
  const cliArgs = [...entry, 'usage', 'export', '--from', from, '--to', to, '--format', 'csv', ...(range.accountId ? ['--account', range.accountId] : [])];
  const env = { DATABASE_URL: databaseUrl, LMGATE_DATA_DIR: dataDir, LMGATE_LOG_LEVEL: 'warn' };
  const cli = await runMeasured(cliArgs, env);
  if (cli.code === 0) return { how: `lmgate usage export${process.env.BENCH_CLI === 'dist' ? '' : ' (from source)'}`, seconds: cli.seconds, peakRssBytes: cli.peakRssBytes };

  const why = cli.stderr.split('\n').find((line) => line.trim() !== '' && !line.startsWith('\t')) ?? `exit ${cli.code}`;
  console.log(`  lmgate usage export failed (${why.slice(0, 200)}): store.exportUsage instead`);
  const untilIso = new Date(Date.parse(`${to}T00:00:00.000Z`) + DAY_MS).toISOString();
  const direct = await runMeasured(['--import', 'tsx', 'bench/usage-scale-export.ts', databaseUrl, new Date(range.fromMs).toISOString(), untilIso, ...(range.accountId ? [range.accountId] : [])], {});
  if (direct.code !== 0) throw new Error(`store.exportUsage failed: ${direct.stderr.slice(0, 400)}`);
  const rows = /^rows (\d+)$/m.exec(direct.stderr);
  return { how: 'store.exportUsage to CSV, no CLI yet', seconds: direct.seconds, peakRssBytes: direct.peakRssBytes, rows: rows ? Number(rows[1]) : undefined };
}

interface Measured {
  code: number | null;
  seconds: number;
  peakRssBytes: number;
  stderr: string;
}

/**
 * `node <args>` with stdout to /dev/null; its peak RSS from GNU time's report when
 * /usr/bin/time exists, else from VmHWM read every 50 ms while it runs.
 */
async function runMeasured(args: string[], env: NodeJS.ProcessEnv): Promise<Measured> {
  const useTime = existsSync(TIME);
  const devNull = openSync('/dev/null', 'w');
  const startedMs = performance.now();
  const child = useTime
    ? spawn(TIME, ['-v', process.execPath, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', devNull, 'pipe'] })
    : spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', devNull, 'pipe'] });
  closeSync(devNull);
  let stderr = '';
  child.stderr!.on('data', (data: Buffer) => (stderr += data.toString()));
  let sampledPeak = 0;
  const sampler = useTime
    ? undefined
    : setInterval(() => {
        try {
          sampledPeak = Math.max(sampledPeak, memoryBytes(child.pid!, 'VmHWM'));
        } catch {
          // it has exited
        }
      }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  const seconds = (performance.now() - startedMs) / 1000;
  const reported = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
  // GNU time exits with the command's own status.
  return { code, seconds, peakRssBytes: reported ? Number(reported[1]) * 1024 : sampledPeak, stderr };
}

/** Prints the first errors lmgate logs (pino's level 50 and above) as they come. */
export function showServerErrors(server: Server): void {
  let shown = 0;
  let partial = '';
  server.child.stdout!.on('data', (data: Buffer) => {
    const lines = (partial + data.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (shown >= ERRORS_SHOWN || !/"level":\s*(5|6)\d/.test(line)) continue;
      shown++;
      console.log(`  lmgate logged: ${line.slice(0, 1200)}`);
    }
  });
}

export function processCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
