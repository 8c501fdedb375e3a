// Usage batches on SQLite go to a worker thread with a connection of its own
// (sqlite-usage-thread.ts): the inserts and the balance debits of a batch run there, off
// the event loop, and the caller awaits the commit. Started when a server's usage writer
// starts (the CLI never needs it), or else on the first batch; a worker that dies fails
// the batches it held (the usage writer retries them; record ids make that safe) and the
// next batch starts another.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { NotFoundInStoreError, type CappedCharge, type UsageRecord } from '../store.js';
import type { UsageBatchReply } from './sqlite-usage-bulk.js';

// Under the test runner this module is TypeScript source, and so is the thread's: it is
// loaded through tsx's loader, registered in the thread first.
const fromSource = import.meta.url.endsWith('.ts');
const THREAD = new URL(fromSource ? './sqlite-usage-thread.ts' : './sqlite-usage-thread.js', import.meta.url);

function spawnThread(path: string): Worker {
  if (!fromSource) return new Worker(THREAD, { workerData: { path } });
  // The ESM entry of tsx's API (require.resolve gives the CommonJS one).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(THREAD.href)}); });`;
  return new Worker(boot, { eval: true, workerData: { path } });
}

interface Waiting {
  resolve: (capped: CappedCharge[]) => void;
  reject: (err: unknown) => void;
}

export class SqliteUsageWorker {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private lastId = 0;
  /** CPU the thread reported having used, as of its last batch. */
  cpuSeconds: number | undefined;

  constructor(private readonly path: string) {}

  /**
   * Starts the thread ahead of the first batch, so a process that dies early has stored
   * what it could. Not from TypeScript source (the test runner's in-process apps): there
   * the thread compiles itself first, CPU that every test app would pay whether it meters
   * anything or not; it starts on the first batch instead.
   */
  start(): void {
    if (!fromSource) this.worker ??= this.spawn();
  }

  recordUsage(records: readonly UsageRecord[], at: string): Promise<CappedCharge[]> {
    const worker = (this.worker ??= this.spawn());
    const id = ++this.lastId;
    return new Promise((resolve, reject) => {
      // Referenced only while a batch is out, so an idle worker never keeps the process up.
      if (this.waiting.size === 0) worker.ref();
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, records, at });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private spawn(): Worker {
    const worker = spawnThread(this.path);
    worker.unref();
    worker.on('message', (reply: UsageBatchReply) => this.settle(reply));
    const fail = (err: Error): void => {
      if (this.worker === worker) this.worker = undefined;
      for (const { reject } of this.waiting.values()) reject(err);
      this.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the usage write thread exited with code ${code}`)));
    return worker;
  }

  private settle(reply: UsageBatchReply): void {
    const waiting = this.waiting.get(reply.id);
    if (!waiting) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker?.unref();
    if ('capped' in reply) {
      this.cpuSeconds = reply.threadCpuSeconds;
      waiting.resolve(reply.capped);
    }
    else if ('missingAccount' in reply) waiting.reject(new NotFoundInStoreError('account', reply.missingAccount));
    else waiting.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name, stack: reply.error.stack }));
  }
}
