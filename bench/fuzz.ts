// `npm run fuzz`: the test suite's fuzzer at length, against the compiled lmgate in its own
// process on its embedded defaults (a roomier tier, so that 429s hide nothing).
//   FUZZ_CASES (1,000,000), FUZZ_SEED (1), FUZZ_CONCURRENCY (32)
// Reports the cases, statuses and failures (each with its replay command), the server's
// memory along the way, and after it stopped, whether only answered 2xx requests were
// charged and the ledger adds up.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Commands } from '../src/commands/commands.js';
import { creditsToMicros } from '../src/money.js';
import { openStore } from '../src/store/kysely-store.js';
import { runCampaign } from '../test/fuzz/campaign.js';
import type { FuzzTarget } from '../test/fuzz/cases.js';
import { ROOT, startServer, type Server } from './processes.js';

const CASES = Number(process.env.FUZZ_CASES ?? 1_000_000);
const SEED = Number(process.env.FUZZ_SEED ?? 1);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 32);
const FUNDED_CREDITS = 100_000_000;

async function main(): Promise<void> {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');
  const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-fuzz-'));
  const sqlitePath = join(dataDir, 'lmgate.db');
  let server: Server | undefined;
  try {
    const env = writeConfig(dataDir);
    const { target, fundedAccountId, otherAccountIds } = await seedAccounts(sqlitePath);
    server = await startServer(['bin/lmgate.js', 'serve'], env);
    const pid = server.child.pid!;
    const port = Number(new URL(server.url).port);
    const rss = { start: rssMb(pid), max: 0, end: 0 };
    const started = performance.now();
    let lastPrint = started;
    const report = await runCampaign({
      port,
      target,
      seed: SEED,
      count: CASES,
      concurrency: CONCURRENCY,
      canaryEvery: 1_000,
      canaryBudgetMs: 1_000,
      maxFailures: 20,
      onProgress: (done) => {
        rss.end = rssMb(pid);
        rss.max = Math.max(rss.max, rss.end);
        if (performance.now() - lastPrint > 30_000) {
          lastPrint = performance.now();
          console.log(`  ${done} cases, ${((performance.now() - started) / 1000).toFixed(0)} s, server RSS ${rss.end.toFixed(0)} MB`);
        }
      },
    });
    const seconds = (performance.now() - started) / 1000;
    await stop(server.child);
    server = undefined;

    console.log(`\nfuzz seed ${SEED}: ${report.cases} cases in ${seconds.toFixed(0)} s (${(report.cases / seconds).toFixed(0)}/s, ${CONCURRENCY} at a time)`);
    console.log(`  families: ${[...report.families].map(([family, n]) => `${family} ${n}`).join(', ')}`);
    console.log(`  statuses: ${[...report.statuses].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).map(([status, n]) => `${status}×${n}`).join(' ')}`);
    console.log(`  normal requests between batches: ${report.canaries}, slowest ${report.slowestCanaryMs.toFixed(0)} ms`);
    console.log(`  server RSS: ${rss.start.toFixed(0)} MB at start, ${rss.max.toFixed(0)} MB at most, ${rss.end.toFixed(0)} MB at the end`);
    const ledgerProblems = await checkCharges(sqlitePath, fundedAccountId, otherAccountIds, report.paidRequestIds);
    const failures = [...report.failures, ...ledgerProblems];
    console.log(`  failures: ${failures.length}`);
    for (const failure of failures) console.log(`  - ${failure}`);
    process.exitCode = failures.length === 0 ? 0 : 1;
  } finally {
    server?.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function writeConfig(dataDir: string): NodeJS.ProcessEnv {
  const configPath = join(dataDir, 'lmgate.yaml');
  writeFileSync(
    configPath,
    [
      'log: { level: error }',
      'demo: { seed_account: false }',
      'tiers:',
      '  roomy: { rpm: 1000000000, tpm: 1000000000000, concurrency: 100000, models: ["*"] }',
      'default_tier: roomy',
      'models:',
      '  fuzz-echo: { backend: demo, kind: echo, tokens_per_sec: 0, price: { input: 1, output: 1 } }',
    ].join('\n'),
  );
  return { LMGATE_CONFIG: configPath, LMGATE_DATA_DIR: dataDir, LMGATE_PORT: '0' };
}

/** Four accounts: funded, broke, with its only key revoked, suspended. */
async function seedAccounts(sqlitePath: string): Promise<{ target: FuzzTarget; fundedAccountId: string; otherAccountIds: string[] }> {
  const store = openStore({ sqlitePath });
  await store.migrate();
  const keyed = async (email: string, credits: number): Promise<{ id: string; secret: string }> => {
    const account = await store.createAccount({ email, tier: 'roomy' });
    if (credits > 0) await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: creditsToMicros(credits), reason: 'fuzz' });
    return { id: account.id, secret: (await new Commands(store).keys.create(account.id, 'fuzz')).secret };
  };
  const funded = await keyed('funded@fuzz.test', FUNDED_CREDITS);
  const broke = await keyed('broke@fuzz.test', 0);
  const revoked = await keyed('revoked@fuzz.test', 100);
  const suspended = await keyed('suspended@fuzz.test', 100);
  for (const key of await store.listKeys(revoked.id)) await store.revokeKey(key.id);
  await store.setAccountStatus(suspended.id, 'suspended');
  await store.close();
  return {
    target: { keys: { funded: funded.secret, broke: broke.secret, revoked: revoked.secret, suspended: suspended.secret }, model: 'fuzz-echo' },
    fundedAccountId: funded.id,
    otherAccountIds: [broke.id, revoked.id, suspended.id],
  };
}

/** Only requests answered 2xx were charged, and the balance is the grant minus their cost. */
async function checkCharges(sqlitePath: string, fundedAccountId: string, otherAccountIds: string[], paid: Set<string>): Promise<string[]> {
  const store = openStore({ sqlitePath });
  try {
    const problems: string[] = [];
    const usage = await store.listUsage(fundedAccountId, { limit: 10_000_000 });
    const charged = usage.reduce((sum, row) => sum + row.costMicros, 0);
    for (const row of usage.filter((r) => r.costMicros > 0 && !paid.has(r.requestId)).slice(0, 20)) {
      problems.push(`${row.requestId} was charged ${row.costMicros} micro-credits without a 2xx answer (recorded ${row.status})`);
    }
    const balance = await store.balanceOf(fundedAccountId);
    const ledger = await store.sumLedger(fundedAccountId);
    const expected = creditsToMicros(FUNDED_CREDITS) - charged;
    if (balance !== expected || ledger !== expected) problems.push(`balance ${balance}, ledger sum ${ledger}, expected ${expected}`);
    for (const accountId of otherAccountIds) {
      const rows = await store.listUsage(accountId);
      if (rows.length > 0) problems.push(`account ${accountId} (not allowed to spend) has ${rows.length} usage rows`);
    }
    console.log(`  charges: ${usage.length} usage rows, ${charged} micro-credits, ${paid.size} answered 2xx`);
    return problems;
  } finally {
    await store.close();
  }
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

/** SIGTERM, and wait for the exit: queued usage is written on the way out. */
function stop(child: import('node:child_process').ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

await main();
