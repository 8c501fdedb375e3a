// `npm run bench:soak`: lmgate under steady mixed load for BENCH_SOAK_SEC (600): wrk at
// BENCH_CONNECTIONS (32) through the mock upstream, requests alternating streaming and
// non-streaming. lmgate's resident memory (VmRSS) is read every second; every 30 s a row
// shows it then and the median of those 30 s (garbage collection swings it by tens of MB
// within seconds), the requests metered in them (usage records written) and the event-loop
// delay as /metrics shows it (over the minute or two before). Target: the last 30 s's
// median RSS within 10 % of the first minute's last 30 s, once the heap and caches have
// grown to their working size.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventLoopDelay, scrapeMetrics, type EventLoopDelayMs } from './lmgate-metrics.js';
import { assertRunning, hasTaskset, memoryBytes, ROOT, type Server } from './processes.js';
import { startMockAndLmgate } from './setup.js';
import { wrkInBackground } from './wrk.js';

const SOAK_SEC = Number(process.env.BENCH_SOAK_SEC ?? 600);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SAMPLE_SEC = 30;
const BASELINE_SEC = 60;
const RSS_DRIFT_TARGET = 0.1;
const MESSAGES = [{ role: 'user', content: 'Hello there! Please repeat this sentence back to me, word for word.' }];

const RSS_READ_MS = 1000;

interface Row extends EventLoopDelayMs {
  atSec: number;
  rssBytes: number;
  /** The median of the RSS read each second since the row before. */
  medianRssBytes: number;
  requestsPerSec: number;
}

async function main(): Promise<void> {
  if (SOAK_SEC < BASELINE_SEC + SAMPLE_SEC) throw new Error(`BENCH_SOAK_SEC must leave a sample after the first minute (≥ ${BASELINE_SEC + SAMPLE_SEC})`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');
  const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-soak-'));
  const servers: Server[] = [];
  const stopLoad = new AbortController();
  try {
    const { lmgate, headers } = await startMockAndLmgate(dataDir, servers);
    const pid = lmgate.child.pid!;

    const plain = JSON.stringify({ model: 'bench-upstream', messages: MESSAGES });
    const streamed = JSON.stringify({ model: 'bench-upstream', messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    // wrk outlasts the last sample, so that sample is taken under load.
    const load = wrkInBackground(
      { url: `${lmgate.url}/v1/chat/completions`, body: plain, alternateBody: streamed, headers, connections: CONNECTIONS, durationSec: SOAK_SEC + 2, scriptDir: dataDir },
      stopLoad.signal,
    );
    load.catch(() => undefined); // awaited after the samples; a failure is thrown there
    const startedMs = performance.now();
    let reads: number[] = [];
    const reader = setInterval(() => {
      if (lmgate.child.exitCode === null && lmgate.child.signalCode === null) reads.push(memoryBytes(pid, 'VmRSS'));
    }, RSS_READ_MS);
    console.log(`\n## Soak: ${SOAK_SEC} s of mixed load\n\nwrk, ${CONNECTIONS} connections, streaming and non-streaming requests alternating, through the mock upstream${hasTaskset ? '; servers on core 0, wrk on core 1' : ''}; RSS at each row and its median over the 30 s before; event-loop delay from lmgate's /metrics (the minute or two before each row)\n`);
    console.log('| at s | RSS MB | median RSS MB | V8 heap used / total MB | req/s | loop delay p50 ms | p99 ms | max ms |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
    const rows: Row[] = [];
    let recordsBefore = 0;
    try {
      for (let atSec = SAMPLE_SEC; atSec <= SOAK_SEC; atSec += SAMPLE_SEC) {
        await sleep(startedMs + atSec * 1000 - performance.now());
        assertRunning(lmgate, 'lmgate');
        const rssBytes = memoryBytes(pid, 'VmRSS');
        const medianRssBytes = median(reads);
        reads = [];
        const sample = await scrapeMetrics(lmgate.url);
        const records = sample('lmgate_usage_records_written_total');
        // Where the resident memory is: V8's heap (used, and what it holds from the OS) against the rest.
        const heap = `${mb(sample('lmgate_nodejs_heap_size_used_bytes'))} / ${mb(sample('lmgate_nodejs_heap_size_total_bytes'))}`;
        const row = { atSec, rssBytes, medianRssBytes, requestsPerSec: (records - recordsBefore) / SAMPLE_SEC, ...(await eventLoopDelay(lmgate.url)) };
        recordsBefore = records;
        rows.push(row);
        console.log(`| ${atSec} | ${mb(rssBytes)} | ${mb(medianRssBytes)} | ${heap} | ${row.requestsPerSec.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.maxMs.toFixed(2)} |`);
      }
    } finally {
      clearInterval(reader);
    }
    const figures = await load;
    const peakBytes = memoryBytes(pid, 'VmHWM');

    const baseline = rows.find((row) => row.atSec === BASELINE_SEC)!;
    const last = rows.at(-1)!;
    const drift = (last.medianRssBytes - baseline.medianRssBytes) / baseline.medianRssBytes;
    console.log(
      `\nwrk: ${figures.requests} requests, ${figures.requestsPerSec.toFixed(0)} req/s, p50 ${(figures.p50Us / 1000).toFixed(2)} ms, p99 ${(figures.p99Us / 1000).toFixed(2)} ms, errors ${figures.errors}; lmgate's peak RSS (VmHWM) ${mb(peakBytes)} MB`,
    );
    console.log(
      `\nTarget: median RSS over the 30 s to ${last.atSec} s ${mb(last.medianRssBytes)} MB, ${(drift * 100).toFixed(1)}% from ${mb(baseline.medianRssBytes)} MB over the 30 s to ${BASELINE_SEC} s (target within ±${RSS_DRIFT_TARGET * 100}%) ${Math.abs(drift) <= RSS_DRIFT_TARGET ? 'met' : 'MISSED'}`,
    );
  } finally {
    stopLoad.abort();
    for (const server of servers) server.child.kill('SIGTERM');
    await sleep(500);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}

await main();
