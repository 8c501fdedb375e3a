// `lmgate serve` (what `npm start` runs): config → store → app → listen, and on SIGTERM or
// SIGINT a drain (http/in-flight.ts) that ends in-flight answers and flushes queued writes.
// With server.workers > 1 this process supervises that many instances (cli/workers.ts).
import cluster from 'node:cluster';
import { buildApp } from '../app.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { assertSecureTransport, readTls } from '../http/transport-policy.js';
import { openStore } from '../store/kysely-store.js';
import type { AccountQueries } from '../store/queries.js';
import { storeLocation, type CliIo } from './context.js';
import { seedDemoAccount } from './seed-demo.js';
import { printBanner, reportListening, superviseWorkers, untilSignalled } from './workers.js';

export async function serve(config: Config, io: CliIo): Promise<number> {
  assertSecureTransport(config);
  const tls = readTls(config); // unreadable files stop the start here, named, before anything opens
  // Listening from the start: a signal that arrives while starting stops the process once
  // it started, instead of being lost.
  const signalled = untilSignalled();
  if (config.server.workers > 1 && cluster.isPrimary) return superviseWorkers(config, io, signalled);

  const store = openStore(storeLocation(config));
  // A supervisor migrated and seeded before it started its workers.
  const seeded = cluster.isWorker ? undefined : (await store.migrate(), await seedDemoAccount(store, new Commands(store), config));

  // Shared mode: limits, credits and usage in Redis, so instances on one PostgreSQL act as one.
  // Loaded only then: ioredis is not needed by a single instance.
  const shared = config.redis.url
    ? await (await import('../shared/connect.js')).openSharedMode(config, store, { onError: (err) => io.err(`redis: ${(err as Error).message}`) })
    : undefined;
  const app = await buildApp(config, { store, shared, tls });
  if (!cluster.isWorker) await warnOfUnknownTiers(store, config, (line) => app.log.warn(line));
  const address = await app.listen({ host: config.server.host, port: config.server.port });
  if (cluster.isWorker) reportListening(address);
  else printBanner(io, address, `store: ${store.dialect}${shared ? ', shared state: redis' : ''}`, seeded);

  await signalled;
  io.out(`lmgate shutting down${cluster.isWorker ? ` (worker ${process.pid})` : ''}`);
  await app.close();
  await store.close();
  // The channel to the supervisor would keep a worker's process alive after its last handle.
  if (cluster.isWorker) process.disconnect();
  return 0;
}

/** Accounts on a tier the config no longer has are served as the default tier: the operator hears of it at start. */
async function warnOfUnknownTiers(store: Pick<AccountQueries, 'countAccountsOutsideTiers'>, config: Config, warn: (line: string) => void): Promise<void> {
  const count = await store.countAccountsOutsideTiers(Object.keys(config.tiers));
  if (count > 0) warn(`${count} account${count === 1 ? ' is' : 's are'} on a tier the config does not have, and served as the default tier (${config.default_tier}): lmgate accounts list shows which`);
}
