// Several lmgate instances in shared mode on loopback: one PostgreSQL database, one Redis
// (under a prefix of the suite's own), each instance with its own Fastify app, port, store
// handle and Redis connections, as separate processes would have.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { buildApp } from '../../src/app.js';
import { Commands } from '../../src/commands/commands.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { openSharedMode } from '../../src/shared/connect.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Account, Store } from '../../src/store/store.js';
import { createTestDatabase } from './postgres.js';
import { TEST_REDIS_URL, testRedis } from './redis.js';

export interface Instance {
  app: FastifyInstance;
  store: Store;
  baseURL: string;
  origin: string;
  client(apiKey: string): OpenAI;
}

export interface TestCluster {
  instances: Instance[];
  config: Config;
  /** A handle on the database of its own (the CLI, an operator). */
  store: Store;
  createAccount(options: { micros: number; tier?: string }): Promise<{ account: Account; apiKey: string }>;
  /** Every instance writes its settled usage to the store now. */
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

/** Room for any load, and two priced models: one answering at once, one taking 0.4 s (admitted before an outage, settled during it). */
export const OUTAGE_LOAD = {
  default_tier: 'roomy',
  tiers: { roomy: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 10_000, models: ['*'] } },
  models: {
    'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 100, output: 100 }, max_output: 16 },
    'slow-echo': { backend: 'demo', kind: 'lorem', tokens_per_sec: 20, price: { input: 100, output: 100 }, max_output: 8 },
  },
};

export interface ClusterOptions {
  /** How often each instance polls the store's change feed (default 50 ms). */
  changePollMs?: number;
  /** Where the instances find Redis (a proxy a test can cut); the local server by default. */
  redisUrl?: string;
}

export async function startCluster(size: number, overrides: Record<string, unknown> = {}, options: ClusterOptions = {}): Promise<TestCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-cluster-'));
  const database = await createTestDatabase();
  const redis = testRedis();
  const config = loadConfig({
    env: {},
    cwd: dataDir,
    overrides: {
      log: { level: 'silent' },
      store: { data_dir: dataDir, database_url: database.url },
      redis: { url: options.redisUrl ?? TEST_REDIS_URL },
      server: { port: 0 },
      ...overrides,
    },
  });
  const location = { databaseUrl: database.url, sqlitePath: '/nonexistent' };
  const store = openStore(location);
  await store.migrate();
  const instances: Instance[] = [];
  for (let i = 0; i < size; i++) {
    const instanceStore = openStore(location);
    const shared = await openSharedMode(config, instanceStore, { prefix: redis.prefix, onError: () => undefined });
    const app = await buildApp(config, { store: instanceStore, shared, changePollMs: options.changePollMs ?? 50 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const origin = `http://127.0.0.1:${address.port}`;
    instances.push({
      app,
      store: instanceStore,
      origin,
      baseURL: `${origin}/v1`,
      client: (apiKey) => new OpenAI({ apiKey, baseURL: `${origin}/v1`, maxRetries: 0, timeout: 20_000 }),
    });
  }
  let accounts = 0;
  return {
    instances,
    config,
    store,
    async createAccount({ micros, tier }) {
      const account = await store.createAccount({ email: `cluster${++accounts}-${process.pid}@example.test`, tier: tier ?? config.default_tier });
      if (micros > 0) await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: micros, reason: 'test' });
      const { secret } = await new Commands(store).keys.create(account.id, 'test');
      return { account, apiKey: secret };
    },
    flushUsage: async () => {
      for (const instance of instances) await instance.app.admission.flush();
    },
    async close() {
      for (const instance of instances) {
        await instance.app.close();
        await instance.store.close();
      }
      await store.close();
      await redis.cleanup();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
