// wrk (Debian's package) as the load generator: microsecond latency percentiles, and a
// fraction of the CPU per request a Node load generator needs, so on a 2-core machine the
// servers, not the load generator, set the pace.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasTaskset, LOAD_CORE } from './processes.js';

export interface WrkFigures {
  requests: number;
  requestsPerSec: number;
  p50Us: number;
  p99Us: number;
  /** Non-2xx answers plus socket errors: any is a failed run. */
  errors: number;
}

export interface WrkRun {
  url: string;
  body: string;
  /** When given, requests alternate between body and this one. */
  alternateBody?: string;
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
  /** Where wrk may write its request script. */
  scriptDir: string;
}

export function wrk(run: WrkRun): WrkFigures {
  const [command, argv] = commandLine(run);
  const result = spawnSync(command, argv, { encoding: 'utf8' });
  if (result.error || result.status !== 0) throw new Error(`wrk failed (apt-get install wrk): ${result.error?.message ?? result.stderr}`);
  return parse(result.stdout);
}

/** wrk in the background, for a run this process watches while it lasts; `signal` stops it. */
export function wrkInBackground(run: WrkRun, signal: AbortSignal): Promise<WrkFigures> {
  const [command, argv] = commandLine(run);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], signal });
  let out = '';
  let err = '';
  child.stdout.on('data', (data: Buffer) => (out += data.toString()));
  child.stderr.on('data', (data: Buffer) => (err += data.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', (error) => reject(new Error(`wrk failed (apt-get install wrk): ${error.message}`)));
    child.on('exit', (code) => (code === 0 ? resolve(parse(out)) : reject(new Error(`wrk exited with ${code}: ${err}`))));
  });
}

/** Writes the request script and gives the command line, wrk pinned to the load core. */
function commandLine(run: WrkRun): [string, string[]] {
  const script = join(run.scriptDir, 'post.lua');
  const bodies = run.alternateBody === undefined ? [run.body] : [run.body, run.alternateBody];
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(run.body)}`,
      ...Object.entries(run.headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`),
      // A request() function costs wrk a Lua call per request: only when bodies alternate.
      ...(bodies.length === 1
        ? []
        : [
            `local bodies = { ${bodies.map((body) => JSON.stringify(body)).join(', ')} }`,
            'local sent = 0',
            'request = function()',
            '  sent = sent + 1',
            '  return wrk.format(nil, nil, nil, bodies[sent % #bodies + 1])',
            'end',
          ]),
    ].join('\n'),
  );
  const argv = ['-t1', `-c${run.connections}`, `-d${run.durationSec}s`, '--latency', '-s', script, run.url];
  return hasTaskset ? ['taskset', ['-c', LOAD_CORE, 'wrk', ...argv]] : ['wrk', argv];
}

function parse(out: string): WrkFigures {
  const latencyUs = (percentile: string): number => {
    const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    if (!match) throw new Error(`no p${percentile} in wrk output:\n${out}`);
    return Number(match[1]) * { us: 1, ms: 1000, s: 1_000_000 }[match[2] as 'us' | 'ms' | 's'];
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: (.*)/.exec(out)?.[1];
  return {
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
    requestsPerSec: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50Us: latencyUs('50'),
    p99Us: latencyUs('99'),
    errors: non2xx + (socketErrors ? 1 : 0),
  };
}
