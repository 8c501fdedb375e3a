// `lmgate serve --workers N`: this process migrates and seeds the store once, then runs N
// instances of lmgate as worker processes sharing the port (node:cluster hands each new
// connection to one of them). It restarts a worker that dies, and on SIGTERM or SIGINT
// passes the signal on and exits once every worker drained. Shared mode is required
// (config/schema.ts): workers agree on credits and limits only through Redis.
import cluster, { type Worker } from 'node:cluster';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { openStore } from '../store/kysely-store.js';
import { storeLocation, type CliIo } from './context.js';
import { seedDemoAccount } from './seed-demo.js';

const RESTART_DELAY_MS = 1_000;

interface Listening {
  lmgate: 'listening';
  address: string;
}

export async function superviseWorkers(config: Config, io: CliIo, signalled: Promise<void>): Promise<number> {
  const store = openStore(storeLocation(config));
  let seeded;
  try {
    await store.migrate();
    seeded = await seedDemoAccount(store, new Commands(store), config);
  } finally {
    await store.close();
  }

  let stopping = false;
  const workers = new Set<Worker>();
  const failures: number[] = [];
  const started = new Promise<string>((resolve, reject) => {
    let listening = 0;
    cluster.on('message', (worker, message: Listening) => {
      if (message?.lmgate !== 'listening') return;
      if (++listening === config.server.workers) resolve(message.address);
      else if (listening > config.server.workers) io.out(`lmgate: worker ${worker.process.pid} listening`);
    });
    cluster.on('exit', (worker, code, signal) => {
      workers.delete(worker);
      if (stopping) {
        // Killed by our SIGTERM: it was still starting, before it could take a request.
        if (code !== 0 && signal !== 'SIGTERM') failures.push(worker.process.pid ?? 0);
        return;
      }
      if (listening < config.server.workers) return reject(new Error(`a worker exited while starting (${signal ?? code})`));
      io.err(`lmgate: worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
      setTimeout(() => {
        if (!stopping) workers.add(cluster.fork());
      }, RESTART_DELAY_MS);
    });
  });
  for (let i = 0; i < config.server.workers; i++) workers.add(cluster.fork());
  const address = await started;
  printBanner(io, address, `${config.server.workers} workers, store: postgres, shared state: redis`, seeded);

  await signalled;
  stopping = true;
  io.out('lmgate shutting down: draining the workers');
  const exited = [...workers].map((worker) => new Promise((resolve) => worker.once('exit', resolve)));
  for (const worker of workers) worker.process.kill('SIGTERM');
  await Promise.all(exited);
  return failures.length === 0 ? 0 : 1;
}

/** A worker tells the supervisor it listens; the supervisor prints the banner once. */
export function reportListening(address: string): void {
  const message: Listening = { lmgate: 'listening', address };
  process.send?.(message);
}

export function printBanner(io: CliIo, address: string, detail: string, seeded: { email: string; secret: string } | undefined): void {
  io.out(`lmgate listening on ${address} (${detail})`);
  io.out(`  OpenAI base URL: ${address}/v1`);
  io.out(`  Dashboard:       ${address}/`);
  if (seeded) {
    io.out('');
    io.out(`  Demo account ${seeded.email} created with this API key (shown once, keep it):`);
    io.out(`    ${seeded.secret}`);
    io.out('');
  }
}

/**
 * Resolves at the first SIGTERM or SIGINT. Later ones are ignored rather than left to
 * kill the process mid-drain: Ctrl-C reaches a supervisor and its workers together, and
 * the supervisor then passes SIGTERM on.
 */
export function untilSignalled(): Promise<void> {
  return new Promise<void>((resolve) => {
    const once = (): void => {
      process.off('SIGINT', once);
      process.off('SIGTERM', once);
      process.on('SIGINT', ignore);
      process.on('SIGTERM', ignore);
      resolve();
    };
    process.on('SIGINT', once);
    process.on('SIGTERM', once);
  });
}

const ignore = (): void => undefined;
