// A seeded billing simulation (in the spirit of TigerBeetle's VOPR): random interleavings of
// grants, adjustments, requests, streams, disconnects, revocations, tier changes,
// suspensions and process restarts against the real app, on SQLite, on PostgreSQL, and in
// shared mode (PostgreSQL + Redis, two instances). After every step the money invariants
// are checked; a failure names its seed and step, and SIM_SEED / SIM_STEPS replay it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { Commands } from '../../src/commands/commands.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createRandom } from '../../src/models/lorem-text.js';
import { openSharedMode } from '../../src/shared/connect.js';
import { openStore } from '../../src/store/kysely-store.js';
import { BalanceWouldGoNegativeError, type Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { TEST_REDIS_URL, testRedis, type TestRedis } from '../helpers/redis.js';

const SEEDS = process.env.SIM_SEED ? [Number(process.env.SIM_SEED)] : [1, 2, 3];
const STEPS = Number(process.env.SIM_STEPS ?? 40);
/** Micro-credits per token, input and output alike: 200 credits per million tokens. */
const PRICE_PER_TOKEN = 200;
/** How long a request may take to be settled after its client left. */
const SETTLE_WAIT_MS = 3_000;
const MODELS = {
  'sim-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 200, output: 200 }, max_output: 64 },
  // Slow enough that a stream is still running when its client leaves.
  'sim-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 400, price: { input: 200, output: 200 }, max_output: 64 },
};
const TIERS = {
  basic: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 3, models: ['*'] },
  wide: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 50, models: ['*'] },
};

type Mode = 'sqlite' | 'postgres' | 'shared';

/** The processes under test: one instance, or two in shared mode, restartable. */
class Deployment {
  instances: { app: FastifyInstance; store: Store; baseURL: string }[] = [];
  readonly store: Store;
  private constructor(
    readonly mode: Mode,
    private readonly config: Config,
    private readonly location: { databaseUrl?: string; sqlitePath: string },
    private readonly cleanups: (() => Promise<void>)[],
    private readonly redis: TestRedis | undefined,
  ) {
    this.store = openStore(location);
  }

  static async start(mode: Mode): Promise<Deployment> {
    const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-sim-'));
    const cleanups: (() => Promise<void>)[] = [async () => rmSync(dataDir, { recursive: true, force: true })];
    let database: TestDatabase | undefined;
    if (mode !== 'sqlite') {
      database = await createTestDatabase();
      cleanups.unshift(() => database!.drop());
    }
    const redis = mode === 'shared' ? testRedis() : undefined;
    if (redis) cleanups.unshift(() => redis.cleanup());
    const config = loadConfig({
      env: {},
      cwd: dataDir,
      overrides: {
        log: { level: 'silent' },
        store: { data_dir: dataDir, ...(database ? { database_url: database.url } : {}) },
        ...(redis ? { redis: { url: TEST_REDIS_URL } } : {}),
        default_tier: 'basic',
        tiers: TIERS,
        models: MODELS,
      },
    });
    const deployment = new Deployment(mode, config, { databaseUrl: database?.url, sqlitePath: join(dataDir, 'lmgate.db') }, cleanups, redis);
    await deployment.store.migrate();
    await deployment.restart();
    return deployment;
  }

  /** Stops every instance (as SIGTERM does: running requests finish, usage is written) and starts them again. */
  async restart(): Promise<void> {
    await this.stopInstances();
    const count = this.mode === 'shared' ? 2 : 1;
    for (let i = 0; i < count; i++) {
      const store = openStore(this.location);
      const shared = this.redis ? await openSharedMode(this.config, store, { prefix: this.redis.prefix, onError: () => undefined }) : undefined;
      const app = await buildApp(this.config, { store, shared, changePollMs: 50 });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      if (address === null || typeof address === 'string') throw new Error('no TCP address');
      this.instances.push({ app, store, baseURL: `http://127.0.0.1:${address.port}/v1` });
    }
  }

  async syncChanges(): Promise<void> {
    for (const { app } of this.instances) await app.changeFeed.poll();
  }

  async flush(): Promise<void> {
    for (const { app } of this.instances) await app.admission.flush();
  }

  async close(): Promise<void> {
    await this.stopInstances();
    await this.store.close();
    for (const cleanup of this.cleanups) await cleanup();
  }

  private async stopInstances(): Promise<void> {
    for (const { app, store } of this.instances.splice(0)) {
      await app.close();
      await store.close();
    }
  }
}

interface SimAccount {
  id: string;
  keys: string[];
  /** Grants and adjustments made, in micro-credits: the balance is this minus usage. */
  credited: number;
  tier: keyof typeof TIERS;
  suspended: boolean;
}

/** What each request asked for, by its request id: the bound on what it may be charged. */
const requested = new Map<string, { maxTokens: number }>();
let requestCounter = 0;

class Simulation {
  readonly accounts: SimAccount[] = [];
  readonly outcomes = new Map<string, number>();

  constructor(
    readonly deployment: Deployment,
    readonly random: () => number,
  ) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  count(outcome: string | number): void {
    const key = String(outcome);
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1);
  }

  async addAccount(micros: number): Promise<void> {
    const { store } = this.deployment;
    const account = await store.createAccount({ email: `sim${this.accounts.length}-${Date.now()}@example.test`, tier: 'basic' });
    if (micros > 0) await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: micros, reason: 'sim' });
    const { secret } = await new Commands(store).keys.create(account.id, 'sim');
    this.accounts.push({ id: account.id, keys: [secret], credited: micros, tier: 'basic', suspended: false });
  }

  client(account: SimAccount): OpenAI {
    const instance = this.pick(this.deployment.instances);
    return new OpenAI({ apiKey: this.pick(account.keys), baseURL: instance.baseURL, maxRetries: 0, timeout: 20_000 });
  }

  /** One chat request; its status (or 'aborted'). */
  async chat(account: SimAccount, mode: 'plain' | 'stream' | 'abort'): Promise<void> {
    const maxTokens = 1 + Math.floor(this.random() * 64);
    const words = 1 + Math.floor(this.random() * 40);
    const model = mode === 'plain' ? this.pick(['sim-echo', 'sim-lorem']) : 'sim-lorem';
    const abortAfter = 1 + Math.floor(this.random() * 5);
    const requestId = `sim-${++requestCounter}`;
    requested.set(requestId, { maxTokens });
    const body = { model, max_tokens: maxTokens, messages: [{ role: 'user' as const, content: 'word '.repeat(words) }] };
    const options = { headers: { 'x-request-id': requestId } };
    try {
      if (mode === 'plain') {
        await this.client(account).chat.completions.create(body, options);
      } else {
        const controller = new AbortController();
        const stream = await this.client(account).chat.completions.create({ ...body, stream: true }, { ...options, signal: controller.signal });
        let chunks = 0;
        for await (const _ of stream) {
          if (mode === 'abort' && ++chunks >= abortAfter) {
            controller.abort();
            this.count('aborted');
            return;
          }
        }
      }
      this.count(200);
    } catch (err) {
      if (err instanceof OpenAI.APIUserAbortError) return this.count('aborted');
      if (err instanceof OpenAI.APIError && err.status !== undefined && err.status < 500) return this.count(err.status);
      throw err;
    }
  }

  /** The actions, each a pure function of the PRNG's draws (timing may still vary). */
  async step(): Promise<string> {
    const { store } = this.deployment;
    const account = this.pick(this.accounts);
    const roll = this.random();
    if (roll < 0.1) {
      const micros = 1_000 + Math.floor(this.random() * 50_000);
      await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: micros, reason: 'sim grant' });
      account.credited += micros;
      await this.deployment.syncChanges();
      return `grant ${micros} to ${account.id}`;
    }
    if (roll < 0.15) {
      const micros = -(1 + Math.floor(this.random() * 20_000));
      try {
        await store.appendLedgerEntry({ accountId: account.id, kind: 'adjustment', amountMicros: micros, reason: 'sim adjustment' });
        account.credited += micros;
      } catch (err) {
        if (!(err instanceof BalanceWouldGoNegativeError)) throw err;
      }
      await this.deployment.syncChanges();
      return `adjust ${micros} on ${account.id}`;
    }
    if (roll < 0.45) {
      const burst = 1 + Math.floor(this.random() * 8);
      await Promise.all(Array.from({ length: burst }, () => this.chat(account, 'plain')));
      return `${burst} concurrent requests from ${account.id}`;
    }
    if (roll < 0.6) {
      await Promise.all([this.chat(account, 'stream'), this.chat(account, 'plain')]);
      return `a stream and a request from ${account.id}`;
    }
    if (roll < 0.72) {
      await Promise.all([this.chat(account, 'abort'), this.chat(account, 'abort')]);
      return `two streams whose clients leave, from ${account.id}`;
    }
    if (roll < 0.78) {
      const keys = await store.listKeys(account.id);
      const live = keys.filter((key) => key.revokedAt === null);
      if (live.length > 0) await store.revokeKey(this.pick(live).id);
      const { secret } = await new Commands(store).keys.create(account.id, 'sim');
      account.keys.push(secret);
      await this.deployment.syncChanges();
      return `revoke a key of ${account.id}, create another`;
    }
    if (roll < 0.86) {
      account.tier = account.tier === 'basic' ? 'wide' : 'basic';
      await store.setAccountTier(account.id, account.tier);
      await this.deployment.syncChanges();
      return `tier of ${account.id} → ${account.tier}`;
    }
    if (roll < 0.92 && (account.suspended || this.random() < 0.4)) {
      account.suspended = !account.suspended;
      await store.setAccountStatus(account.id, account.suspended ? 'suspended' : 'active');
      await this.deployment.syncChanges();
      return `${account.suspended ? 'suspend' : 'reactivate'} ${account.id}`;
    }
    // A restart while requests run: they finish, usage is written, then new processes.
    // A request that meets the closing server gets a 503 or a refused connection: expected.
    const duringRestart = (err: unknown): void => this.count(err instanceof OpenAI.APIError ? `restart:${err.status ?? 'connection'}` : 'restart:other');
    const running = Promise.all([this.chat(account, 'stream').catch(duringRestart), this.chat(account, 'plain').catch(duringRestart)]);
    await new Promise((resolve) => setTimeout(resolve, this.random() * 30));
    await this.deployment.restart();
    await running;
    return 'restart';
  }

  /**
   * A client that left is noticed by the server a moment later, and only then is its
   * request settled: wait (bounded) until nothing is reserved, so that what remains after
   * the wait is a leak.
   */
  private async settled(): Promise<void> {
    const deadline = performance.now() + SETTLE_WAIT_MS;
    for (;;) {
      let reserved = 0;
      for (const { app } of this.deployment.instances) {
        for (const account of this.accounts) reserved += (await app.admission.snapshot(account.id)).reservedMicros;
      }
      if (reserved === 0 || performance.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Every invariant, for every account; returns what is broken. */
  async check(): Promise<string[]> {
    const problems: string[] = [];
    const { store } = this.deployment;
    await this.settled();
    await this.deployment.flush();
    for (const account of this.accounts) {
      const balance = await store.balanceOf(account.id);
      const ledgerSum = await store.sumLedger(account.id);
      if (balance !== ledgerSum) problems.push(`${account.id}: balance ${balance} ≠ ledger sum ${ledgerSum}`);
      if (balance < 0) problems.push(`${account.id}: balance ${balance} < 0`);
      const usage = await store.listUsage(account.id, { limit: 100_000 });
      const ledger = await store.listLedger(account.id, { limit: 100_000 });
      // What was charged: each record's cost, less what the account could not pay.
      const charged = usage.reduce((sum, row) => sum + row.costMicros - row.shortfallMicros, 0);
      if (balance !== account.credited - charged) problems.push(`${account.id}: balance ${balance} ≠ credited ${account.credited} − usage ${charged}`);
      const usageEntries = new Map(ledger.filter((entry) => entry.kind === 'usage').map((entry) => [entry.reference, entry]));
      for (const row of usage) {
        const asked = requested.get(row.requestId);
        if (!asked) problems.push(`${account.id}: usage row ${row.id} of an unknown request ${row.requestId}`);
        else if (row.completionTokens > asked.maxTokens) problems.push(`${row.requestId}: ${row.completionTokens} output tokens, above its max_tokens ${asked.maxTokens}`);
        // The charge is price × usage, or the balance reached 0 and the shortfall is recorded.
        if (row.costMicros !== (row.promptTokens + row.completionTokens) * PRICE_PER_TOKEN) problems.push(`${row.requestId}: cost ${row.costMicros} ≠ price × its usage`);
        if (row.shortfallMicros < 0 || row.shortfallMicros > row.costMicros) problems.push(`${row.requestId}: shortfall ${row.shortfallMicros} outside its cost`);
        const entry = usageEntries.get(row.id);
        const paid = row.costMicros - row.shortfallMicros;
        if (row.costMicros > 0 && entry?.amountMicros !== (paid === 0 ? 0 : -paid)) problems.push(`${row.id}: charged ${paid}, ledger entry ${entry?.amountMicros}`);
        if (row.shortfallMicros > 0 && !entry?.reason?.includes('capped at the balance left')) problems.push(`${row.id}: a shortfall whose ledger entry does not say so`);
        usageEntries.delete(row.id);
      }
      if (usageEntries.size > 0) problems.push(`${account.id}: ${usageEntries.size} usage ledger entries without a usage row`);
      for (const { app } of this.deployment.instances) {
        const live = await app.admission.snapshot(account.id);
        if (live.reservedMicros !== 0) problems.push(`${account.id}: ${live.reservedMicros} still reserved after every request settled`);
        if (live.balanceMicros !== balance) problems.push(`${account.id}: the instance sees ${live.balanceMicros}, the store holds ${balance}`);
      }
    }
    return problems;
  }
}

describe.each<Mode>(['sqlite', 'postgres', 'shared'])('billing simulation on %s', (mode) => {
  let deployment: Deployment | undefined;
  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}, ${STEPS} steps`, async () => {
      deployment = await Deployment.start(mode);
      const sim = new Simulation(deployment, createRandom(seed));
      for (let i = 0; i < 3; i++) await sim.addAccount(Math.floor(sim.random() * 200_000));
      const replay = `SIM_SEED=${seed} SIM_STEPS=${STEPS} npx vitest run test/billing/billing-simulation.test.ts -t '${mode}'`;
      for (let step = 0; step < STEPS; step++) {
        let action = '(not started)';
        const startedAt = performance.now();
        try {
          action = await sim.step();
          if (performance.now() - startedAt > 2_000) console.log(`${mode}, seed ${seed}, step ${step} (${action}) took ${(performance.now() - startedAt).toFixed(0)} ms`);
        } catch (err) {
          throw new Error(`${mode}, seed ${seed}, step ${step} (${action}) threw: ${(err as Error).stack}\n  replay: ${replay}`);
        }
        const problems = await sim.check();
        if (problems.length > 0) throw new Error(`${mode}, seed ${seed}, step ${step} (${action}):\n  ${problems.join('\n  ')}\n  replay: ${replay}`);
      }
      const outcomes = [...sim.outcomes].map(([outcome, n]) => `${outcome}×${n}`).join(' ');
      console.log(`billing simulation on ${mode}, seed ${seed}: ${STEPS} steps; outcomes ${outcomes}`);
      expect(sim.outcomes.get('200') ?? 0).toBeGreaterThan(0);
    }, 180_000);
  }
});
