// `lmgate serve` (what `npm start` runs): config → store → app → listen → demo account, and
// on SIGTERM or SIGINT a drain (http/in-flight.ts) that ends in-flight answers and flushes
// queued writes. A start that fails (a taken port, a database that cannot be reached) says
// so in one line, closes what it opened and exits; a signal while starting ends it at once
// (cli/stop-signals.ts). With server.workers > 1 this process supervises that many
// instances (cli/workers.ts).
import cluster from 'node:cluster';
import { buildApp } from '../app.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { warningsOf } from '../config/warnings.js';
import { assertSecureTransport, readTls } from '../http/transport-policy.js';
import { openStore } from '../store/kysely-store.js';
import type { AccountQueries } from '../store/queries.js';
import type { SharedMode } from '../shared/connect.js';
import { storeLocation, type CliIo } from './context.js';
import { assertCanListen, listenFailure } from './listen-failure.js';
import { seedDemoAccount } from './seed-demo.js';
import { watchStopSignals, type StopSignals } from './stop-signals.js';
import { printBanner, reportListening, reportStartFailure, superviseWorkers } from './workers.js';

export async function serve(config: Config, io: CliIo): Promise<number> {
  assertSecureTransport(config);
  const tls = readTls(config); // unreadable files stop the start here, named, before anything opens
  const signals = watchStopSignals(io);
  try {
    if (cluster.isPrimary) await assertCanListen(config.server.host, config.server.port);
    if (config.server.workers > 1 && cluster.isPrimary) return await superviseWorkers(config, io, signals);
    return await serveOne(config, io, tls, signals);
  } catch (err) {
    // A worker leaves the one line to its supervisor, which prints it once for all.
    if (cluster.isWorker && (await reportStartFailure(err))) return 1;
    throw err;
  } finally {
    signals.dispose();
    // The channel to the supervisor would keep a worker's process alive after its last handle.
    if (cluster.isWorker && process.connected) process.disconnect();
  }
}

async function serveOne(config: Config, io: CliIo, tls: ReturnType<typeof readTls>, signals: StopSignals): Promise<number> {
  const store = openStore(storeLocation(config));
  let shared: SharedMode | undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let address: string;
  try {
    // A supervisor migrated before it started its workers.
    if (!cluster.isWorker) await store.migrate();
    // Shared mode: limits, credits and usage in Redis, so instances on one PostgreSQL act as one.
    // Loaded only then: ioredis is not needed by a single instance.
    shared = config.redis.url
      ? await (await import('../shared/connect.js')).openSharedMode(config, store, { onError: (err) => io.err(`redis: ${(err as Error).message}`) })
      : undefined;
    app = await buildApp(config, { store, shared, tls });
    if (!cluster.isWorker) {
      // Once per start, not per worker: what the config says but probably does not mean.
      for (const line of warningsOf(config)) app.log.warn(line);
      await warnOfUnknownTiers(store, config, (line) => app!.log.warn(line));
    }
    const { host, port } = config.server;
    address = await app.listen({ host, port }).catch((err: unknown) => {
      throw listenFailure(err, host, port);
    });
  } catch (err) {
    // Closed, so the process ends with the error rather than living on without a port.
    await (app ? app.close() : shared?.admission.close())?.catch(() => undefined);
    await store.close().catch(() => undefined);
    throw err;
  }
  signals.listening();
  // Only now: a start that fails must not use up the one time the demo key is printed.
  // A supervisor seeds once its workers listen.
  const seeded = cluster.isWorker ? undefined : await seedDemoAccount(store, new Commands(store), config);
  if (cluster.isWorker) reportListening(address);
  else printBanner(io, address, `store: ${store.dialect}${shared ? ', shared state: redis' : ''}`, seeded);

  await signals.stopped;
  io.out(`lmgate shutting down${cluster.isWorker ? ` (worker ${process.pid})` : ''}`);
  await app.close();
  await store.close();
  return 0;
}

/** Accounts on a tier the config no longer has are served as the default tier: the operator hears of it at start. */
async function warnOfUnknownTiers(store: Pick<AccountQueries, 'countAccountsOutsideTiers'>, config: Config, warn: (line: string) => void): Promise<void> {
  const count = await store.countAccountsOutsideTiers(Object.keys(config.tiers));
  if (count > 0) warn(`${count} account${count === 1 ? ' is' : 's are'} on a tier the config does not have, and served as the default tier (${config.default_tier}): ./lmgate accounts list shows which`);
}
