// `npm run bench:streams`: many slow streams open at once through lmgate. BENCH_STREAMS
// (1,000) streaming requests at once to the mock's slow model (a chunk every 100 ms for
// 20 s), from this process with undici, one connection each. lmgate's resident memory is
// sampled every 250 ms, and its peak (VmHWM, reset once lmgate is warm) read at the end.
// Targets: every stream ends with `[DONE]`, and lmgate's peak stays within 250 MB.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { eventLoopDelay, scrapeMetrics } from './lmgate-metrics.js';
import { assertRunning, cpuSeconds, hasTaskset, memoryBytes, ROOT, type Server } from './processes.js';
import { startMockAndLmgate } from './setup.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const PEAK_TARGET_BYTES = 250e6;
const SAMPLE_MS = 250;
const MESSAGES = [{ role: 'user', content: 'Hello there! Please repeat this sentence back to me, word for word.' }];
const DONE = 'data: [DONE]\n\n';

interface StreamResult {
  isDone: boolean;
  events: number;
  error?: string;
}

async function main(): Promise<void> {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');
  const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-streams-'));
  const servers: Server[] = [];
  try {
    const { lmgate, headers } = await startMockAndLmgate(dataDir, servers);
    const pid = lmgate.child.pid!;
    const pool = new Pool(lmgate.url, { connections: STREAMS });

    // The code paths of a stream loaded and compiled before the baseline is read.
    const fast = JSON.stringify({ model: 'bench-upstream', messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    for (let i = 0; i < 200; i++) await readStream(pool, headers, fast);
    await sleep(500); // the usage writer's last batch
    // The peak from here on: startup (the tokenizer's tables among others) peaks higher than idle.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const idleBytes = memoryBytes(pid, 'VmRSS');
    const idleHeap = await scrapeMetrics(lmgate.url);
    const recordsBefore = (await scrapeMetrics(lmgate.url))('lmgate_usage_records_written_total');

    let open = 0;
    let peakSampled = { bytes: 0, open: 0 };
    const sampler = setInterval(() => {
      if (lmgate.child.exitCode !== null || lmgate.child.signalCode !== null) return; // reported below
      const bytes = memoryBytes(pid, 'VmRSS');
      if (bytes > peakSampled.bytes) peakSampled = { bytes, open };
    }, SAMPLE_MS);
    // V8's heap halfway through, when every stream is open: what the streams hold, beside RSS.
    const heapMidway = sleep(10_000).then(async () => {
      const sample = await scrapeMetrics(lmgate.url);
      return { open, rss: memoryBytes(pid, 'VmRSS'), used: sample('lmgate_nodejs_heap_size_used_bytes'), held: sample('lmgate_nodejs_heap_size_total_bytes') };
    });
    const cpuBefore = cpuSeconds(pid);
    const startedMs = performance.now();
    const slow = JSON.stringify({ model: 'bench-slow', messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    const results = await Promise.all(
      Array.from({ length: STREAMS }, async () => {
        open++;
        try {
          return await readStream(pool, headers, slow);
        } finally {
          open--;
        }
      }),
    );
    const wallSec = (performance.now() - startedMs) / 1000;
    const midway = await heapMidway;
    clearInterval(sampler);
    assertRunning(lmgate, 'lmgate');
    const cpuSec = cpuSeconds(pid) - cpuBefore;
    const peakBytes = memoryBytes(pid, 'VmHWM');
    const delay = await eventLoopDelay(lmgate.url);
    await pool.close();
    await sleep(500); // the usage writer's last batch
    const after = await scrapeMetrics(lmgate.url);
    const records = after('lmgate_usage_records_written_total') - recordsBefore;
    const afterBytes = memoryBytes(pid, 'VmRSS');

    const done = results.filter((result) => result.isDone).length;
    const errors = [...new Set(results.flatMap((result) => (result.error === undefined ? [] : [result.error])))];
    const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
    console.log(`\n## ${STREAMS} concurrent slow streams\n\nundici, one connection per stream; the mock sends a chunk every 100 ms for 20 s${hasTaskset ? '; servers on core 0, this process on core 1' : ''}\n`);
    console.log('| figure | value |');
    console.log('|---|---:|');
    console.log(`| streams ended with [DONE] | ${done} of ${STREAMS} |`);
    console.log(`| events per stream (min–max) | ${Math.min(...results.map((r) => r.events))}–${Math.max(...results.map((r) => r.events))} |`);
    console.log(`| usage records written | ${records} |`);
    console.log(`| wall time s | ${wallSec.toFixed(1)} |`);
    console.log(`| lmgate RSS before, MB | ${mb(idleBytes)} |`);
    console.log(`| V8 heap used / held before, MB | ${mb(idleHeap('lmgate_nodejs_heap_size_used_bytes'))} / ${mb(idleHeap('lmgate_nodejs_heap_size_total_bytes'))} |`);
    console.log(`| lmgate peak RSS (VmHWM since before), MB | ${mb(peakBytes)} |`);
    console.log(`| highest RSS sampled, MB (streams open then) | ${mb(peakSampled.bytes)} (${peakSampled.open}) |`);
    console.log(`| peak above before, per stream, KB | ${((peakBytes - idleBytes) / STREAMS / 1e3).toFixed(1)} |`);
    console.log(`| 10 s in (${midway.open} open): RSS / V8 heap used / held, MB | ${mb(midway.rss)} / ${mb(midway.used)} / ${mb(midway.held)} |`);
    console.log(`| lmgate RSS after, MB; V8 heap used / held then | ${mb(afterBytes)}; ${mb(after('lmgate_nodejs_heap_size_used_bytes'))} / ${mb(after('lmgate_nodejs_heap_size_total_bytes'))} |`);
    console.log(`| lmgate CPU while streaming | ${((cpuSec / wallSec) * 100).toFixed(0)}% of a core |`);
    console.log(`| event-loop delay p50 / p99 / max ms | ${delay.p50Ms.toFixed(2)} / ${delay.p99Ms.toFixed(2)} / ${delay.maxMs.toFixed(2)} |`);
    if (errors.length > 0) console.log(`\nErrors: ${errors.join('; ')}`);
    console.log(`\nTargets:\n- every stream ended with [DONE]: ${done} of ${STREAMS} ${verdict(done === STREAMS)}`);
    console.log(`- peak RSS ${mb(peakBytes)} MB (target ≤ ${mb(PEAK_TARGET_BYTES)} MB) ${verdict(peakBytes <= PEAK_TARGET_BYTES)}`);
  } finally {
    for (const server of servers) server.child.kill('SIGTERM');
    await sleep(500);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One streamed answer read to its end: whether it closed with [DONE], and its events. */
async function readStream(pool: Pool, headers: Record<string, string>, body: string): Promise<StreamResult> {
  try {
    const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers, body });
    let seen = ''; // the end of what came before: enough for [DONE] and a split `data:`
    let events = 0;
    for await (const part of res.body) {
      const text = seen + (part as Buffer).toString('latin1');
      // Each `data:` that ends in this part; one wholly in `seen` was counted before.
      for (let at = text.indexOf('data:', Math.max(0, seen.length - 4)); at !== -1; at = text.indexOf('data:', at + 1)) events++;
      seen = text.slice(-DONE.length);
    }
    if (res.statusCode !== 200) return { isDone: false, events, error: `status ${res.statusCode}` };
    return { isDone: seen === DONE, events };
  } catch (err) {
    return { isDone: false, events: 0, error: (err as Error).message };
  }
}

function verdict(met: boolean): string {
  return met ? 'met' : 'MISSED';
}

await main();
