// `npm run bench:spends`: no overdraft across instances, at length. SPEND_INSTANCES (4)
// lmgate instances in shared mode on one PostgreSQL and Redis take SPENDS (10,000)
// concurrent priced requests, round-robin, SPEND_CONCURRENCY (200) at a time, against a
// balance that covers about a tenth of them. Reports what was served and refused, and
// checks that the balance is the start minus every usage record's cost, and the ledger sum.
import OpenAI from 'openai';
import { startCluster } from '../test/helpers/start-cluster.js';

const SPENDS = Number(process.env.SPENDS ?? 10_000);
const INSTANCES = Number(process.env.SPEND_INSTANCES ?? 4);
const CONCURRENCY = Number(process.env.SPEND_CONCURRENCY ?? 200);
const PRICE = 100; // micro-credits per token, in and out
const MAX_TOKENS = 16;

async function main(): Promise<void> {
  const cluster = await startCluster(INSTANCES, {
    default_tier: 'roomy',
    tiers: { roomy: { rpm: 100_000_000, tpm: 1_000_000_000_000, concurrency: 100_000, models: ['*'] } },
    models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: PRICE, output: PRICE }, max_output: MAX_TOKENS } },
  });
  try {
    const messages = [{ role: 'user' as const, content: 'spend' }];
    const probe = await cluster.createAccount({ micros: 1_000_000 });
    const { usage: probed } = await cluster.instances[0]!.client(probe.apiKey).chat.completions.create({ model: 'priced-echo', messages, max_tokens: MAX_TOKENS });
    const worstCase = (probed!.prompt_tokens + MAX_TOKENS) * PRICE;
    const start = worstCase * Math.floor(SPENDS / 10);
    const { account, apiKey } = await cluster.createAccount({ micros: start });
    const clients = cluster.instances.map((instance) => instance.client(apiKey));

    const statuses = new Map<number, number>();
    let next = 0;
    const startedAt = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SPENDS) {
          const i = next++;
          const status = await clients[i % INSTANCES]!.chat.completions.create({ model: 'priced-echo', messages, max_tokens: MAX_TOKENS }).then(
            () => 200,
            (err: unknown) => (err instanceof OpenAI.APIError ? (err.status ?? 0) : 0),
          );
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - startedAt) / 1000;

    await cluster.flushUsage();
    const usage = await cluster.store.listUsage(account.id, { limit: SPENDS + 1 });
    const charged = usage.reduce((sum, row) => sum + row.costMicros, 0);
    const balance = await cluster.store.balanceOf(account.id);
    const ledger = await cluster.store.sumLedger(account.id);
    const served = statuses.get(200) ?? 0;
    const checks = {
      'every answer 200 or 402': [...statuses.keys()].every((status) => status === 200 || status === 402),
      'one usage record per 200': usage.length === served,
      'balance = start − usage': balance === start - charged,
      'balance = ledger sum': balance === ledger,
      'no overdraft (balance ≥ 0)': balance >= 0,
    };
    console.log(`${SPENDS} spends over ${INSTANCES} instances, ${CONCURRENCY} at a time, in ${seconds.toFixed(1)} s (${(SPENDS / seconds).toFixed(0)}/s)`);
    console.log(`statuses: ${[...statuses].map(([status, count]) => `${status} × ${count}`).join(', ')}`);
    console.log(`balance ${start} → ${balance} micro-credits (${((100 * charged) / start).toFixed(1)} % spent), worst case per request ${worstCase}`);
    for (const [check, passed] of Object.entries(checks)) console.log(`  ${passed ? 'ok  ' : 'FAIL'} ${check}`);
    if (!Object.values(checks).every(Boolean)) process.exitCode = 1;
  } finally {
    await cluster.close();
  }
}

await main();
