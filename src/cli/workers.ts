// `lmgate serve --workers N`: this process migrates the store once, then runs N instances
// of lmgate as worker processes sharing the port (node:cluster hands each new connection to
// one of them), and seeds the demo account once they all listen. It restarts a worker that
// dies, and on SIGTERM or SIGINT passes the signal on and exits once every worker drained.
// Shared mode is required (config/schema.ts): workers agree on credits and limits only
// through Redis.
import cluster, { type Worker } from 'node:cluster';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { findConnectionError } from '../store/connection-error.js';
import { openStore } from '../store/kysely-store.js';
import { CliError, storeLocation, type CliIo } from './context.js';
import { seedDemoAccount } from './seed-demo.js';
import type { StopSignals } from './stop-signals.js';

const RESTART_DELAY_MS = 1_000;

type WorkerMessage = { lmgate: 'listening'; address: string } | { lmgate: 'failed'; problem: string };

export async function superviseWorkers(config: Config, io: CliIo, signals: StopSignals): Promise<number> {
  const store = openStore(storeLocation(config));
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }

  let stopping = false;
  const workers = new Set<Worker>();
  const failures: number[] = [];
  // A signal while the workers start ends them with this process.
  signals.onAbort(() => {
    for (const worker of workers) worker.process.kill('SIGTERM');
  });
  let problem: string | undefined;
  const started = new Promise<string>((resolve, reject) => {
    let listening = 0;
    cluster.on('message', (worker, message: WorkerMessage) => {
      if (message?.lmgate === 'failed') problem ??= message.problem;
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
      if (listening < config.server.workers) return reject(new CliError(problem ?? `a worker exited while starting (${signal ?? code})`));
      io.err(`lmgate: worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
      setTimeout(() => {
        if (!stopping) workers.add(cluster.fork());
      }, RESTART_DELAY_MS);
    });
  });
  for (let i = 0; i < config.server.workers; i++) workers.add(cluster.fork());
  let address: string;
  try {
    address = await started;
  } catch (err) {
    // One worker could not start (its reason is the error): the others stop with it.
    stopping = true;
    await stopWorkers(workers);
    await store.close().catch(() => undefined);
    throw err;
  }
  signals.listening();
  let seeded;
  try {
    seeded = await seedDemoAccount(store, new Commands(store), config);
  } finally {
    await store.close();
  }
  printBanner(io, address, `${config.server.workers} workers, store: postgres, shared state: redis`, seeded);

  await signals.stopped;
  stopping = true;
  io.out('lmgate shutting down: draining the workers');
  await stopWorkers(workers);
  return failures.length === 0 ? 0 : 1;
}

async function stopWorkers(workers: Set<Worker>): Promise<void> {
  const exited = [...workers].map((worker) => new Promise((resolve) => worker.once('exit', resolve)));
  for (const worker of workers) worker.process.kill('SIGTERM');
  await Promise.all(exited);
}

/** A worker tells the supervisor it listens; the supervisor prints the banner once. */
export function reportListening(address: string): void {
  const message: WorkerMessage = { lmgate: 'listening', address };
  process.send?.(message);
}

/** A worker's start failed for a reason meant for the operator: the supervisor prints it once, for all. */
export async function reportStartFailure(err: unknown): Promise<boolean> {
  const problem = err instanceof CliError ? err : findConnectionError(err);
  if (!problem || !process.send) return false;
  const message: WorkerMessage = { lmgate: 'failed', problem: problem.message };
  // Delivered before the worker disconnects.
  await new Promise((resolve) => process.send!(message, undefined, {}, resolve));
  return true;
}

export function printBanner(io: CliIo, address: string, detail: string, seeded: { email: string; secret: string } | undefined): void {
  io.out(`lmgate listening on ${address} (${detail})`);
  io.out(`  OpenAI base URL: ${address}/v1`);
  io.out(`  Dashboard:       ${address}/`);
  if (seeded) {
    io.out('');
    io.out(`  Demo account ${seeded.email} created with this API key (shown once, keep it):`);
    io.out(`    ${seeded.secret}`);
    io.out(`  Lost it? ./lmgate keys create ${seeded.email} --name laptop makes another.`);
    io.out('');
  }
}
