// `npm run bench:usage-scale`: usage data at scale on PostgreSQL (issue 33's figures). In a
// fresh database: BENCH_ACCOUNTS (10,000) accounts with keys, then BENCH_RECORDS (10 million)
// usage records over 13 calendar months through the store's real write path (recordUsage,
// the usage writer's batch of 500, one batch in flight as one instance's writer has it;
// BENCH_LOAD_WRITERS for more, as more instances would write), lmgate serving
// BENCH_API_RPS requests a second to the demo model on the same database for all but the
// first fifth of the load. Then: bytes per record, the reads of the dashboard, the console
// and the admin API over HTTP (p50/p95 of BENCH_READS, 50), the streaming export's time and peak
// memory, `verifyUsage` over everything, and the time to drop the oldest month. Prints one
// markdown table per size. BENCH_RECORDS may list two sizes ("1000000,10000000"): each
// runs in its own database, then a table extrapolates each figure to 50 million.
// BENCH_KEEP=1 keeps the database; BENCH_DATABASE_URL runs the phases after the load
// against a kept one; BENCH_PHASES picks phases (load,size,reads,export,verify,prune).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Commands } from '../src/commands/commands.js';
import { openStore } from '../src/store/kysely-store.js';
import type { Store } from '../src/store/store.js';
import { assertRunning, cpuSeconds, startServer, type Server } from './processes.js';
import { createBenchDatabase, postgresCpuSeconds, postgresSettings, type BenchDatabase } from './shared.js';
import { benchPeriod, createAccounts, generateRecords, loadRecords, WRITER_BATCH, type BenchAccount, type LoadFigures, type BenchAccounts } from './usage-scale-data.js';
import { processCpuSeconds, showServerErrors, startApiLoad, timeExport, type ApiLoad } from './usage-scale-processes.js';
import { adminHeaders, dashboardHeaders, lastDays, timeRead, wholePeriod, type ReadFigures } from './usage-scale-reads.js';
import { measureSizes } from './usage-scale-sizes.js';
import { printResults, printTrend, type Row } from './usage-scale-report.js';

const SIZES = (process.env.BENCH_RECORDS ?? '10000000').split(',').map((size) => Number(size.replaceAll('_', '')));
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 10_000);
const API_RPS = Number(process.env.BENCH_API_RPS ?? 50);
const WRITERS = Number(process.env.BENCH_LOAD_WRITERS ?? 1);
const KEEP = process.env.BENCH_KEEP === '1';
const EXISTING_URL = process.env.BENCH_DATABASE_URL;
const PHASES = new Set((process.env.BENCH_PHASES ?? 'load,size,reads,export,verify,prune').split(','));
/** The share of the load written before the API traffic starts: the load rate alone, then beside it. */
const QUIET_SHARE = 0.2;
const PROGRESS_MS = 10_000;
const TIER = 'bench';

async function main(): Promise<void> {
  if (SIZES.some((size) => !Number.isSafeInteger(size) || size <= 0) || !(ACCOUNTS >= 3)) throw new Error('BENCH_RECORDS: record counts (comma-separated); BENCH_ACCOUNTS: at least 3');
  if (EXISTING_URL && (SIZES.length > 1 || PHASES.has('load'))) throw new Error('BENCH_DATABASE_URL runs the phases after the load on a kept database: set BENCH_PHASES without load');
  const results: { records: number; rows: Row[] }[] = [];
  for (const records of SIZES) results.push({ records, rows: await runSize(records) });
  if (results.length > 1) printTrend(results, 50_000_000);
}

async function runSize(records: number): Promise<Row[]> {
  const rows: Row[] = [];
  const database: BenchDatabase | undefined = EXISTING_URL ? undefined : await createBenchDatabase();
  const databaseUrl = EXISTING_URL ?? database!.url;
  const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-usage-scale-'));
  const store = openStore({ databaseUrl, sqlitePath: '/nonexistent/never-used.db' });
  let server: Server | undefined;
  const nowMs = Date.now();
  const period = benchPeriod(nowMs);
  if (EXISTING_URL) records = await countRecords(databaseUrl);
  console.log(`\n# bench:usage-scale: ${records.toLocaleString('en')} records, ${ACCOUNTS.toLocaleString('en')} accounts, ${new Date(period.fromMs).toISOString().slice(0, 10)} to now; database ${databaseUrl.replace(/^.*\//, '')}`);
  try {
    await store.migrate();
    const settings = await postgresSettings(databaseUrl);
    console.log(`  PostgreSQL: ${settings}`);
    rows.push({ measure: 'PostgreSQL', value: settings });
    const accounts = EXISTING_URL ? await findAccounts(store) : await timed('accounts', () => createAccounts(store, ACCOUNTS, TIER));
    const api = await createApiAccount(store);
    server = await startLmgate(databaseUrl, dataDir);
    showServerErrors(server);
    if (PHASES.has('load')) rows.push(...(await phase('load', () => loadPhase(store, databaseUrl, accounts, records, period, server!, api))));
    if (PHASES.has('size')) rows.push(...(await phase('size', () => measureSizes(databaseUrl))));
    if (PHASES.has('reads')) rows.push(...(await phase('reads', () => readsPhase(store, server!, accounts, period.fromMs, nowMs))));
    if (PHASES.has('export')) rows.push(...(await phase('export', () => exportPhase(databaseUrl, dataDir, accounts.large, period.fromMs, nowMs))));
    if (PHASES.has('verify')) rows.push(...(await phase('verify', () => verifyPhase(store, period.fromMs, nowMs))));
    if (PHASES.has('prune')) rows.push(...(await phase('prune', () => prunePhase(store, databaseUrl, period.fromMs))));
  } finally {
    server?.child.kill('SIGTERM');
    if (server && server.child.exitCode === null && server.child.signalCode === null) await new Promise((resolve) => server!.child.once('exit', resolve));
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (database && !KEEP) await database.drop();
    else if (database) console.log(`kept: BENCH_DATABASE_URL=${database.url}`);
  }
  printResults(records, ACCOUNTS, rows);
  return rows;
}

async function countRecords(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('select count(*) as n from usage_records')).rows[0]!.n);
  } finally {
    await client.end();
  }
}

/** A phase's rows, or one row saying why it failed: the others still run. */
async function phase(name: string, run: () => Promise<Row[]>): Promise<Row[]> {
  console.log(`${new Date().toISOString().slice(11, 19)} ${name}…`);
  try {
    return await run();
  } catch (err) {
    console.log(`  ${name} failed: ${(err as Error).stack ?? String(err)}`);
    return [{ measure: `${name}`, value: `FAILED: ${(err as Error).message.split('\n')[0]}` }];
  }
}

async function timed<T>(what: string, run: () => Promise<T>): Promise<T> {
  const startedMs = performance.now();
  const result = await run();
  console.log(`  ${what}: ${((performance.now() - startedMs) / 1000).toFixed(1)} s`);
  return result;
}

async function findAccounts(store: Store): Promise<BenchAccounts> {
  const find = async (i: number): Promise<BenchAccount> => {
    const account = await store.findAccount(`bench${i}@usage-scale.lmgate.local`);
    if (!account) throw new Error(`BENCH_DATABASE_URL: no bench${i}@usage-scale.lmgate.local: not a bench:usage-scale database`);
    return { id: account.id, keyIds: (await store.listKeys(account.id)).map((key) => key.id), model: 0 };
  };
  const [large, small] = [await find(0), await find(1)];
  return { all: [large, small], large, small };
}

/** The account the API traffic spends from, with a key; the demo model's charges land as usage records too. */
async function createApiAccount(store: Store): Promise<{ apiKey: string }> {
  const account = await store.createAccount({ email: `api-${Date.now()}@usage-scale.lmgate.local`, tier: TIER });
  await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 100_000_000_000, reason: 'bench' });
  return { apiKey: (await new Commands(store).keys.create(account.id, 'api load')).secret };
}

/** lmgate from this checkout's source, on PostgreSQL with embedded caches, limits far above the traffic. */
function startLmgate(databaseUrl: string, dataDir: string): Promise<Server> {
  const configPath = join(dataDir, 'lmgate.yaml');
  writeFileSync(
    configPath,
    ['log: { level: warn }', 'demo: { seed_account: false }', 'tiers:', `  ${TIER}: { rpm: 100000000, tpm: 100000000000, concurrency: 100000, models: ["*"] }`, `default_tier: ${TIER}`].join('\n'),
  );
  const entry = process.env.BENCH_CLI === 'dist' ? ['bin/lmgate.js'] : ['--import', 'tsx', 'src/main.ts'];
  return startServer([...entry, 'serve'], { LMGATE_CONFIG: configPath, LMGATE_DATA_DIR: dataDir, LMGATE_PORT: '0', DATABASE_URL: databaseUrl });
}

async function loadPhase(store: Store, databaseUrl: string, accounts: BenchAccounts, total: number, period: { fromMs: number; untilMs: number }, server: Server, api: { apiKey: string }): Promise<Row[]> {
  const startedMs = performance.now();
  const cpuBefore = { bench: processCpuSeconds(), lmgate: cpuSeconds(server.child.pid!), postgres: postgresCpuSeconds() };
  let apiLoad: ApiLoad | undefined;
  let apiStartedMs = 0;
  let writtenAtApiStart = 0;
  let lastReport = { atMs: startedMs, written: 0 };
  let written = 0;
  const progress = setInterval(() => {
    const atMs = performance.now();
    const recent = ((written - lastReport.written) / (atMs - lastReport.atMs)) * 1000;
    const overall = (written / (atMs - startedMs)) * 1000;
    console.log(`  load: ${written.toLocaleString('en')} / ${total.toLocaleString('en')} records, ${recent.toFixed(0)}/s over the last ${((atMs - lastReport.atMs) / 1000).toFixed(0)} s, ${overall.toFixed(0)}/s overall${apiLoad ? ', API traffic on' : ''}`);
    lastReport = { atMs, written };
  }, PROGRESS_MS);
  let load: LoadFigures;
  try {
    load = await loadRecords(store, generateRecords(accounts, total, period), WRITERS, (count) => {
      written = count;
      if (!apiLoad && count >= total * QUIET_SHARE) {
        apiLoad = startApiLoad(server.url, api.apiKey, API_RPS);
        apiStartedMs = performance.now();
        writtenAtApiStart = count;
      }
    });
  } catch (err) {
    if (apiLoad) await apiLoad.stop().catch(() => undefined);
    throw err;
  } finally {
    clearInterval(progress);
  }
  const endedMs = performance.now();
  const cpu = { bench: processCpuSeconds() - cpuBefore.bench, lmgate: cpuSeconds(server.child.pid!) - cpuBefore.lmgate, postgres: postgresCpuSeconds() - cpuBefore.postgres };
  assertRunning(server, 'lmgate');
  const figures = await apiLoad?.stop();
  // The server's usage writer commits within ~100 ms; its records count as written.
  await sleep(500);
  const apiRecords = figures?.requests ?? 0;
  const quietRate = (writtenAtApiStart / (apiStartedMs - startedMs)) * 1000;
  const servedSec = (endedMs - apiStartedMs) / 1000;
  const servedRate = (written - writtenAtApiStart + apiRecords) / servedSec;
  const rate = (n: number): string => `${Math.round(n).toLocaleString('en')} records/s`;
  const rows: Row[] = [
    { measure: 'load, whole (bench writer + API)', value: `${rate((written + apiRecords) / ((endedMs - startedMs) / 1000))}, ${((endedMs - startedMs) / 1000).toFixed(0)} s` },
    { measure: `load, first ${QUIET_SHARE * 100} % (no API traffic)`, value: rate(quietRate) },
    { measure: `load while the API serves ${API_RPS}/s`, value: `${rate(servedRate)} over ${servedSec.toFixed(0)} s`, target: '≥ 5,000', met: servedRate >= 5000, number: servedRate, unit: 'records/s' },
  ];
  if (figures) {
    rows.push({
      measure: 'API during the load (demo-echo, POST /v1/chat/completions)',
      value: `${figures.requestsPerSec.toFixed(0)} req/s, p50 ${figures.p50Ms.toFixed(1)} ms, p95 ${figures.p95Ms.toFixed(1)} ms, p99 ${figures.p99Ms.toFixed(1)} ms, ${figures.errors} errors, ${figures.skipped} skipped`,
      number: figures.p95Ms,
      unit: 'ms p95',
    });
  }
  const batchMs = [...load.batchMs].sort((a, b) => a - b);
  const batchAt = (q: number): number => batchMs[Math.min(batchMs.length - 1, Math.floor(q * batchMs.length))] ?? Number.NaN;
  rows.push({
    measure: `recordUsage per batch of ${WRITER_BATCH} (${WRITERS} in flight)`,
    value: `p50 ${batchAt(0.5).toFixed(0)} ms, p95 ${batchAt(0.95).toFixed(0)} ms, ${load.accountsPerBatch.toFixed(0)} accounts per batch on average`,
    number: batchAt(0.5),
    unit: 'ms p50',
  });
  rows.push({
    measure: 'CPU during the load (2 cores)',
    // Anything else on the machine (a build, a test run) takes the same cores: the load average says how busy it was.
    value: `PostgreSQL ${cpu.postgres.toFixed(0)} s, bench writer ${cpu.bench.toFixed(0)} s, lmgate ${cpu.lmgate.toFixed(0)} s, over ${((endedMs - startedMs) / 1000).toFixed(0)} s; load average at the end ${loadavg().map((n) => n.toFixed(1)).join(' / ')} (1 / 5 / 15 min)`,
  });
  console.log(`  load done: ${written.toLocaleString('en')} bench records in batches of ${WRITER_BATCH}, ${WRITERS} in flight; ${apiRecords} API requests`);
  // What autovacuum would have done to a table that grew this much (insert-triggered
  // vacuum, analyze): the reads that follow are planned on statistics and the visibility map.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const vacuumStartedMs = performance.now();
    await client.query('VACUUM (ANALYZE)');
    // The pages the vacuum dirtied are written now, not by the checkpointer during the reads.
    await client.query('CHECKPOINT');
    rows.push({ measure: 'VACUUM (ANALYZE) and CHECKPOINT after the load', value: `${((performance.now() - vacuumStartedMs) / 1000).toFixed(1)} s` });
  } finally {
    await client.end();
  }
  return rows;
}

async function readsPhase(store: Store, server: Server, accounts: BenchAccounts, fromMs: number, nowMs: number): Promise<Row[]> {
  const admin = await adminHeaders(store);
  const thirty = lastDays(30, nowMs);
  const whole = wholePeriod(fromMs, nowMs);
  const targets = [];
  for (const [who, account] of [['large', accounts.large], ['small', accounts.small]] as const) {
    const session = await dashboardHeaders(store, account.id);
    targets.push(
      { name: `dashboard usage page, 30 d, ${who}`, paths: [`/api/dashboard/usage?${thirty}`], headers: session },
      { name: `dashboard usage page, ${whole.label}, ${who}`, paths: [`/api/dashboard/usage?${whole.query}`], headers: session },
      { name: `request log, first page, ${who}`, paths: ['/api/dashboard/requests?limit=50', '/api/dashboard/keys'], headers: session },
      { name: `admin usage, 30 d, account_id ${who}`, paths: [`/api/admin/v1/usage?${thirty}&account_id=${account.id}`], headers: admin },
      { name: `admin usage, ${whole.label}, account_id ${who}`, paths: [`/api/admin/v1/usage?${whole.query}&account_id=${account.id}`], headers: admin },
    );
  }
  targets.push(
    { name: 'console Overview (admin usage 30 d + upstreams)', paths: ['/api/admin/v1/usage', '/api/admin/v1/upstreams'], headers: admin },
    { name: 'admin usage, 30 d, every account', paths: [`/api/admin/v1/usage?${thirty}`], headers: admin },
    { name: `admin usage, ${whole.label}, every account`, paths: [`/api/admin/v1/usage?${whole.query}`], headers: admin },
  );
  const rows: Row[] = [];
  for (const target of targets) {
    const figures: ReadFigures = await timeRead(server.url, target);
    console.log(`  ${figures.name}: ${figures.error ?? `p50 ${figures.p50Ms.toFixed(1)} ms, p95 ${figures.p95Ms.toFixed(1)} ms, ${(figures.bytes / 1000).toFixed(0)} kB`}`);
    rows.push(
      figures.error
        ? { measure: `read: ${figures.name}`, value: `FAILED: ${figures.error.slice(0, 160)}` }
        : { measure: `read: ${figures.name}`, value: `p50 ${figures.p50Ms.toFixed(1)} ms, p95 ${figures.p95Ms.toFixed(1)} ms (${figures.reads} reads, ${(figures.bytes / 1000).toFixed(0)} kB)`, target: 'p95 ≤ 100 ms', met: figures.p95Ms <= 100, number: figures.p95Ms, unit: 'ms p95' },
    );
  }
  return rows;
}

async function exportPhase(databaseUrl: string, dataDir: string, large: BenchAccount, fromMs: number, nowMs: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [who, accountId] of [['large account', large.id], ['everything', undefined]] as const) {
    const figures = await timeExport(databaseUrl, dataDir, { fromMs, nowMs, accountId });
    rows.push({ measure: `export, ${who} (${figures.how})`, value: `${figures.seconds.toFixed(1)} s, peak RSS ${(figures.peakRssBytes / 1e6).toFixed(0)} MB${figures.rows === undefined ? '' : `, ${figures.rows.toLocaleString('en')} rows`}`, number: figures.peakRssBytes / 1e6, unit: 'MB peak RSS' });
  }
  return rows;
}

async function verifyPhase(store: Store, fromMs: number, nowMs: number): Promise<Row[]> {
  const startedMs = performance.now();
  const differences = await store.verifyUsage({ fromIso: new Date(fromMs).toISOString(), untilIso: new Date(nowMs + 24 * 60 * 60 * 1000).toISOString() });
  const seconds = (performance.now() - startedMs) / 1000;
  for (const difference of differences.slice(0, 5)) console.log(`  difference: ${JSON.stringify(difference)}`);
  return [{ measure: 'verifyUsage over the whole period', value: `${differences.length} differences, ${seconds.toFixed(1)} s`, target: 'none', met: differences.length === 0, number: seconds, unit: 's' }];
}

async function prunePhase(store: Store, databaseUrl: string, fromMs: number): Promise<Row[]> {
  const from = new Date(fromMs);
  const beforeIso = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1)).toISOString();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const month = await client.query<{ n: string }>('select count(*) as n from usage_records where created_at < $1', [beforeIso]).finally(() => client.end());
  const startedMs = performance.now();
  const pruned = await store.pruneUsage(beforeIso);
  const seconds = (performance.now() - startedMs) / 1000;
  return [
    {
      measure: `drop the oldest month (pruneUsage before ${beforeIso.slice(0, 10)})`,
      value: `${(seconds * 1000).toFixed(0)} ms, partitions dropped: ${pruned.partitionsDropped.join(', ') || 'none'}, rows deleted ${pruned.rowsDeleted}; the month held ${Number(month.rows[0]!.n).toLocaleString('en')} records`,
      target: '< 1 s',
      met: seconds < 1 && pruned.partitionsDropped.length > 0,
      number: seconds * 1000,
      unit: 'ms',
    },
  ];
}

await main();
