// wrk (Debian's package) as the load generator: microsecond latency percentiles, and a
// fraction of the CPU per request a Node load generator needs, so on a 2-core machine the
// servers, not the load generator, set the pace.
import { spawnSync } from 'node:child_process';
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
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
  /** Where wrk may write its request script. */
  scriptDir: string;
}

export function wrk(run: WrkRun): WrkFigures {
  const script = join(run.scriptDir, 'post.lua');
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(run.body)}`,
      ...Object.entries(run.headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`),
    ].join('\n'),
  );
  const argv = ['-t1', `-c${run.connections}`, `-d${run.durationSec}s`, '--latency', '-s', script, run.url];
  const result = spawnSync(hasTaskset ? 'taskset' : 'wrk', hasTaskset ? ['-c', LOAD_CORE, 'wrk', ...argv] : argv, { encoding: 'utf8' });
  if (result.error || result.status !== 0) throw new Error(`wrk failed (apt-get install wrk): ${result.error?.message ?? result.stderr}`);
  return parse(result.stdout);
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
