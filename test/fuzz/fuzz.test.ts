// The project's own fuzzer, a few thousand cases per run: structured mutations of chat
// requests, HTTP framing and byte abuse, header abuse, all over raw sockets against the
// real app. A failure prints its seed and index; FUZZ_SEED and FUZZ_INDEX replay it alone.
// `npm run fuzz` runs a million against a separate process.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { creditsToMicros } from '../../src/money.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { replayCommand, runCampaign } from './campaign.js';
import { type FuzzTarget } from './cases.js';

const SEED = Number(process.env.FUZZ_SEED ?? 1);
const ONLY = process.env.FUZZ_INDEX === undefined ? undefined : Number(process.env.FUZZ_INDEX);
const CASES = Number(process.env.FUZZ_CASES ?? 3000);
const FUNDED_CREDITS = 1_000_000;

let t: TestApp;
let target: FuzzTarget;
let fundedAccountId: string;
const otherAccountIds: string[] = [];

beforeAll(async () => {
  t = await startApp({
    overrides: {
      default_tier: 'roomy',
      // Limits far above the campaign's rate, so a 429 never hides another answer.
      tiers: { roomy: { rpm: 10_000_000, tpm: 10_000_000_000, concurrency: 1000, models: ['*'] } },
      models: { 'fuzz-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 1, output: 1 } } },
    },
  });
  const funded = await t.createAccount({ credits: FUNDED_CREDITS });
  const broke = await t.createAccount({ credits: 0 });
  const revoked = await t.createAccount();
  const suspended = await t.createAccount();
  for (const key of await t.store.listKeys(revoked.account.id)) await t.store.revokeKey(key.id);
  await t.store.setAccountStatus(suspended.account.id, 'suspended');
  await t.syncChanges();
  fundedAccountId = funded.account.id;
  otherAccountIds.push(broke.account.id, revoked.account.id, suspended.account.id);
  target = { keys: { funded: funded.apiKey, broke: broke.apiKey, revoked: revoked.apiKey, suspended: suspended.apiKey }, model: 'fuzz-echo' };
});
afterAll(() => t.close());

it(`fuzz: seed ${SEED}, ${ONLY === undefined ? `${CASES} cases` : `case ${ONLY}`}`, async () => {
  const rssBefore = process.memoryUsage().rss;
  const report = await runCampaign({
    port: Number(new URL(t.origin).port),
    target,
    seed: SEED,
    first: ONLY ?? 0,
    count: ONLY === undefined ? CASES : 1,
    concurrency: 8,
    canaryEvery: 250,
    canaryBudgetMs: 2_000,
    maxFailures: 1,
  });
  const rssGrowthMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  console.log(
    `fuzz seed ${SEED}: ${report.cases} cases (${[...report.families].map(([f, n]) => `${f} ${n}`).join(', ')}); ` +
      `statuses ${[...report.statuses].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).map(([s, n]) => `${s}×${n}`).join(' ')}; ` +
      `slowest canary ${report.slowestCanaryMs.toFixed(0)} ms; RSS ${rssGrowthMb >= 0 ? '+' : ''}${rssGrowthMb.toFixed(0)} MB`,
  );
  expect(report.failures).toEqual([]);
  expect(rssGrowthMb).toBeLessThan(300);

  // Credits: only answered 2xx requests were charged, and the ledger adds up.
  await t.flushUsage();
  const usage = await t.store.listUsage(fundedAccountId, { limit: 1_000_000 });
  const unpaid = usage.filter((row) => row.costMicros > 0 && !report.paidRequestIds.has(row.requestId));
  expect(unpaid.map((row) => `${row.requestId} charged ${row.costMicros} micro-credits, answered ${row.status} (${replayOf(row.requestId)})`)).toEqual([]);
  const charged = usage.reduce((sum, row) => sum + row.costMicros, 0);
  expect(await t.store.sumLedger(fundedAccountId)).toBe(creditsToMicros(FUNDED_CREDITS) - charged);
  expect(await t.store.balanceOf(fundedAccountId)).toBe(creditsToMicros(FUNDED_CREDITS) - charged);
  for (const accountId of otherAccountIds) expect(await t.store.listUsage(accountId)).toEqual([]);
}, 120_000);

/** The replay command of the case a request id belongs to (cases send fz-<seed>-<index>). */
function replayOf(requestId: string): string {
  const match = /^fz-(\d+)-(\d+)$/.exec(requestId);
  return match ? replayCommand(Number(match[1]), Number(match[2])) : 'not a case of this campaign';
}
