// Starts the real app on a loopback port with a temporary SQLite file (or a fresh
// PostgreSQL database), and gives tests what they need to seed accounts and keys.
// LMGATE_TEST_MODE=shared runs every app a suite starts in shared mode instead (a fresh
// PostgreSQL database and the local Redis under a prefix of its own), so one suite checks
// one contract in both modes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { buildApp } from '../../src/app.js';
import { Commands } from '../../src/commands/commands.js';
import { creditsToMicros } from '../../src/money.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { openSharedMode } from '../../src/shared/connect.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Account, Store } from '../../src/store/store.js';
import type { WebhookWorkerOptions } from '../../src/webhooks/worker.js';
import { createTestDatabase } from './postgres.js';
import { TEST_REDIS_URL, testRedis } from './redis.js';

/** Whether suites run their apps in shared mode (PostgreSQL and Redis). */
export const SHARED_MODE = process.env.LMGATE_TEST_MODE === 'shared';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  store: Store;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** The preferred base URL: origin + /v1 */
  baseURL: string;
  dataDir: string;
  /** An account (default tier, 100 credits unless told otherwise) with one API key. */
  createAccount(options?: { email?: string; tier?: string; credits?: number }): Promise<{ account: Account; apiKey: string }>;
  /** Writes queued usage and charges to the store now. */
  flushUsage(): Promise<void>;
  client(apiKey: string, baseURL?: string): OpenAI;
  /** Applies store changes made outside the app (revocations, suspensions) right now. */
  syncChanges(): Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  overrides?: Record<string, unknown>;
  database?: 'sqlite' | 'postgres';
  /** The webhook sender's clock, schedule and timings. */
  webhooks?: WebhookWorkerOptions;
}

let accountCounter = 0;

export async function startApp(options: StartOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-test-'));
  const database = options.database === 'postgres' || SHARED_MODE ? await createTestDatabase() : undefined;
  const redis = SHARED_MODE ? testRedis() : undefined;
  const config = loadConfig({
    env: {},
    cwd: dataDir,
    overrides: {
      log: { level: 'silent' },
      store: { data_dir: dataDir, ...(database ? { database_url: database.url } : {}) },
      ...(redis ? { redis: { url: TEST_REDIS_URL } } : {}),
      server: { port: 0 },
      // Suites sign up many accounts from 127.0.0.1; the throttle has its own test.
      signup: { per_address_per_hour: 10_000 },
      ...options.overrides,
    },
  });
  const store = openStore({ databaseUrl: config.store.database_url, sqlitePath: join(dataDir, 'lmgate.db') });
  await store.migrate();
  const shared = redis && (await openSharedMode(config, store, { prefix: redis.prefix, onError: () => undefined }));
  const app = await buildApp(config, { store, shared, changePollMs: 50, webhooks: options.webhooks });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const origin = `http://127.0.0.1:${address.port}`;

  return {
    app,
    config,
    store,
    origin,
    baseURL: `${origin}/v1`,
    dataDir,
    async createAccount(opts = {}) {
      const account = await store.createAccount({
        email: opts.email ?? `user${++accountCounter}-${process.pid}@example.test`,
        tier: opts.tier ?? config.default_tier,
      });
      const credits = opts.credits ?? 100;
      if (credits > 0) {
        await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: creditsToMicros(credits), reason: 'test' });
      }
      const { secret } = await new Commands(store).keys.create(account.id, 'test');
      return { account, apiKey: secret };
    },
    client(apiKey, baseURL = `${origin}/v1`) {
      return new OpenAI({ apiKey, baseURL, maxRetries: 0, timeout: 20_000 });
    },
    syncChanges: () => app.changeFeed.poll(),
    async flushUsage() {
      await app.admission.flush();
      // Shared mode: a settlement whose Redis call timed out (a starved test process) is kept
      // and tried again; wait until it has landed, as the server would.
      for (let tries = 0; tries < 50 && (app.admission.health().shared?.unsettled ?? 0) > 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await app.admission.flush();
      }
    },
    async close() {
      await app.close();
      await store.close();
      await redis?.cleanup();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
