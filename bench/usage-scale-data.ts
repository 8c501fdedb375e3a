// The data of `npm run bench:usage-scale`: accounts with keys and a balance no charge can
// exhaust, and usage records over 13 calendar months written through the store's real
// write path (`recordUsage`, batches of the usage writer's size, a few in flight).
import { generateApiKey } from '../src/auth/api-key.js';
import { newTimeOrderedId } from '../src/ids.js';
import { createRandom } from '../src/models/lorem-text.js';
import type { Store, UsageRecord } from '../src/store/store.js';
import type { UsageOutcome } from '../src/store/usage-basis.js';

/** The usage writer's batch (billing/usage-writer.ts maxBatch, shared/usage-stream-writer.ts BATCH). */
export const WRITER_BATCH = 500;
/**
 * 100,000 credits: more than the large account spends at 50 million records (about 10^10
 * micro-credits), and 10,000 grants of it on one day still sum to a safe integer.
 */
const BALANCE_MICROS = 100_000_000_000;
/** The large account's share of every record. */
const LARGE_SHARE = 0.05;
/** The small account's records, whatever the size. */
const SMALL_RECORDS = 300;
/** The rest of the accounts share the records by a Zipf law of this exponent (the busiest about 2 % at 10,000 accounts). */
const ZIPF_EXPONENT = 0.7;
const ACCOUNTS_PER_TRANSACTION = 100;
const MODELS = ['demo-echo', 'gpt-4o-mini', 'claude-sonnet-4', 'llama-3.3-70b', 'qwen3-32b'] as const;
/** Micro-credits per token of input and output, per model. */
const PRICES: Record<(typeof MODELS)[number], [number, number]> = {
  'demo-echo': [1, 2],
  'gpt-4o-mini': [1, 1],
  'claude-sonnet-4': [3, 15],
  'llama-3.3-70b': [1, 1],
  'qwen3-32b': [1, 2],
};

export interface BenchAccount {
  id: string;
  /** The first is the one most of its requests use. */
  keyIds: string[];
  /** Most of its requests go to one model (MODELS index), as most customers' do. */
  model: number;
}

export interface BenchAccounts {
  /** Index 0 is the large account, index 1 the small one. */
  all: BenchAccount[];
  large: BenchAccount;
  small: BenchAccount;
}

/**
 * `count` accounts, two keys each (the large one five), each granted BALANCE_MICROS: the
 * store's own methods, ACCOUNTS_PER_TRANSACTION to a transaction, a few transactions at a time.
 */
export async function createAccounts(store: Store, count: number, tier: string): Promise<BenchAccounts> {
  const all: BenchAccount[] = new Array<BenchAccount>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const first = next;
      next = Math.min(count, next + ACCOUNTS_PER_TRANSACTION);
      const last = next;
      await store.transaction(async (tx) => {
        for (let i = first; i < last; i++) {
          const account = await tx.createAccount({ email: `bench${i}@usage-scale.lmgate.local`, tier });
          await tx.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: BALANCE_MICROS, reason: 'bench' });
          const keyIds: string[] = [];
          for (let k = 0; k < (i === 0 ? 5 : 2); k++) {
            const key = generateApiKey();
            keyIds.push((await tx.createApiKey({ accountId: account.id, name: `key ${k}`, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour })).id);
          }
          all[i] = { id: account.id, keyIds, model: i % MODELS.length };
        }
      });
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { all, large: all[0]!, small: all[1]! };
}

/** The period the records cover: 13 calendar months, the current one up to now. */
export function benchPeriod(nowMs: number): { fromMs: number; untilMs: number } {
  const now = new Date(nowMs);
  return { fromMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 12, 1), untilMs: nowMs };
}

/**
 * `total` records in time order, evenly over the period: every 20th the large account's,
 * SMALL_RECORDS spread evenly the small one's, the rest Zipf-like over the others. A
 * seeded generator, so two runs of a size write the same shape.
 */
export function* generateRecords(accounts: BenchAccounts, total: number, period: { fromMs: number; untilMs: number }): Generator<UsageRecord> {
  // Seeded: the same records for the same size.
  const random = createRandom(33);
  const others = accounts.all.slice(2);
  const cumulative = zipfCumulative(others.length);
  const stepMs = (period.untilMs - period.fromMs) / total;
  const smallEvery = Math.max(1, Math.floor(total / SMALL_RECORDS));
  const largeEvery = Math.round(1 / LARGE_SHARE);
  for (let n = 0; n < total; n++) {
    let account: BenchAccount;
    if (n % smallEvery === smallEvery - 1) account = accounts.small;
    else if (n % largeEvery === 0 || others.length === 0) account = accounts.large;
    else account = others[pick(cumulative, random())]!;
    yield makeRecord(account, Math.floor(period.fromMs + n * stepMs), random);
  }
}

function makeRecord(account: BenchAccount, atMs: number, random: () => number): UsageRecord {
  // 70 % to the account's usual model and 80 % through its first key: the rollup's groups
  // (day, account, key, model, status) hold several records each, as a real account's do.
  const model = MODELS[random() < 0.7 ? account.model : Math.floor(random() * MODELS.length)]!;
  const [inPrice, outPrice] = PRICES[model];
  const roll = random();
  // Mostly answered; some clients leave (499), some upstreams fail, some requests are bad.
  const status = roll < 0.92 ? 200 : roll < 0.95 ? 499 : roll < 0.97 ? 400 : roll < 0.99 ? 502 : 500;
  const outcome: UsageOutcome = status === 499 ? 'client_gone' : status >= 500 ? 'upstream_failed' : 'completed';
  const promptTokens = 20 + Math.floor(random() * 4000);
  const completionTokens = status === 400 ? 0 : Math.floor(random() * 1200);
  const cachedTokens = random() < 0.3 ? Math.floor(promptTokens * random()) : 0;
  const reasoningTokens = model === 'claude-sonnet-4' || model === 'qwen3-32b' ? Math.floor(completionTokens * random() * 0.5) : 0;
  return {
    id: newTimeOrderedId('usage'),
    requestId: `req_bench_${Math.floor(random() * 2 ** 48).toString(36)}`,
    accountId: account.id,
    keyId: account.keyIds[random() < 0.8 ? 0 : Math.floor(random() * account.keyIds.length)]!,
    memberId: null,
    model,
    promptTokens,
    completionTokens,
    cachedTokens,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens,
    basis: random() < 0.02 ? 'counted' : 'reported',
    outcome,
    costMicros: promptTokens * inPrice + completionTokens * outPrice,
    shortfallMicros: 0,
    heldMicros: 0,
    latencyMs: 50 + Math.floor(random() * 5000),
    status,
    streamed: random() < 0.6,
    finishReason: status === 200 ? 'stop' : null,
    createdAt: new Date(atMs).toISOString(),
  };
}

export interface LoadFigures {
  written: number;
  /** How long each recordUsage call took, ms, in order. */
  batchMs: number[];
  /** Distinct accounts per batch, on average: the balances each batch locks and updates. */
  accountsPerBatch: number;
}

/**
 * Writes `records` with `writers` loops, each a usage writer's way: take the next batch
 * of WRITER_BATCH, `recordUsage` it, repeat. `onBatch` sees the running count.
 */
export async function loadRecords(store: Store, records: Iterator<UsageRecord>, writers: number, onBatch: (written: number) => void): Promise<LoadFigures> {
  let written = 0;
  let done = false;
  const batchMs: number[] = [];
  let accounts = 0;
  const nextBatch = (): UsageRecord[] => {
    const batch: UsageRecord[] = [];
    while (!done && batch.length < WRITER_BATCH) {
      const next = records.next();
      if (next.done) done = true;
      else batch.push(next.value);
    }
    return batch;
  };
  const writer = async (): Promise<void> => {
    for (let batch = nextBatch(); batch.length > 0; batch = nextBatch()) {
      const startedMs = performance.now();
      const capped = await store.recordUsage(batch);
      batchMs.push(performance.now() - startedMs);
      accounts += new Set(batch.map((record) => record.accountId)).size;
      if (capped.length > 0) throw new Error(`${capped.length} charges capped at the balance: the bench's balances are meant to cover everything`);
      written += batch.length;
      onBatch(written);
    }
  };
  await Promise.all(Array.from({ length: writers }, writer));
  return { written, batchMs, accountsPerBatch: accounts / Math.max(1, batchMs.length) };
}

function zipfCumulative(n: number): Float64Array {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cumulative[k] = sum += 1 / (k + 1) ** ZIPF_EXPONENT;
  for (let k = 0; k < n; k++) cumulative[k]! /= sum;
  return cumulative;
}

function pick(cumulative: Float64Array, u: number): number {
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (cumulative[mid]! < u) low = mid + 1;
    else high = mid;
  }
  return low;
}

