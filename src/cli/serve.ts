// `lmgate serve` (what `npm start` runs): config → store → app → listen, and a clean
// shutdown that drains in-flight requests and flushes queued writes.
import { buildApp } from '../app.js';
import type { Config } from '../config/schema.js';
import { assertSecureTransport } from '../http/transport-policy.js';
import { openSharedMode } from '../shared/connect.js';
import { openStore } from '../store/kysely-store.js';
import { storeLocation, type CliIo } from './context.js';
import { seedDemoAccount } from './seed-demo.js';

export async function serve(config: Config, io: CliIo): Promise<number> {
  assertSecureTransport(config);
  const store = openStore(storeLocation(config));
  await store.migrate();
  const seeded = await seedDemoAccount(store, config);

  // Shared mode: limits, credits and usage in Redis, so instances on one PostgreSQL act as one.
  const shared = config.redis.url ? await openSharedMode(config, store, { onError: (err) => io.err(`redis: ${(err as Error).message}`) }) : undefined;
  const app = await buildApp(config, { store, shared });
  const address = await app.listen({ host: config.server.host, port: config.server.port });
  io.out(`lmgate listening on ${address} (store: ${store.dialect}${shared ? ', shared state: redis' : ''})`);
  io.out(`  OpenAI base URL: ${address}/v1`);
  io.out(`  Dashboard:       ${address}/`);
  if (seeded) {
    io.out('');
    io.out(`  Demo account ${seeded.email} created with this API key (shown once, keep it):`);
    io.out(`    ${seeded.secret}`);
    io.out('');
  }

  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  io.out('lmgate shutting down');
  await app.close();
  await store.close();
  return 0;
}
