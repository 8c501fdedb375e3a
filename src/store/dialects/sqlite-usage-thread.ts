// The worker thread that owns the SQLite connection usage batches are written on, so a
// batch's inserts never hold the event loop (sqlite-usage-worker.ts is the other side).
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { NotFoundInStoreError } from '../store.js';
import { openSqliteHandle } from './sqlite-handle.js';
import { SqliteUsageBulk, type UsageBatchReply, type UsageBatchRequest } from './sqlite-usage-bulk.js';

// Appends touch only the last pages of each table and index: SQLite's default 2 MiB cache
// writes as fast as 32 MiB on a table of 200,000 records, and does not grow the process
// by 30 MiB over a long run.
const WRITER_CACHE_MIB = 2;

// Below the event loop's priority (Linux nice is per thread): where both share one core,
// the scheduler lets a batch wait rather than the requests in flight. A tenth of a core
// still writes several thousand records a second.
const BELOW_EVENT_LOOP_NICE = 10;
try {
  setPriority(BELOW_EVENT_LOOP_NICE);
} catch {
  // not permitted here: the thread runs at the process's priority
}

const bulk = new SqliteUsageBulk(openSqliteHandle((workerData as { path: string }).path, WRITER_CACHE_MIB));

parentPort!.on('message', ({ id, records, at }: UsageBatchRequest) => {
  let reply: UsageBatchReply;
  try {
    reply = { id, capped: bulk.recordUsage(records, at), threadCpuSeconds: threadCpuSeconds() };
  } catch (err) {
    reply =
      err instanceof NotFoundInStoreError
        ? { id, missingAccount: err.ref }
        : { id, error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : { name: 'Error', message: String(err) } };
  }
  parentPort!.postMessage(reply);
});

// Linux's clock ticks for /proc times (sysconf(_SC_CLK_TCK)); 100 on every mainstream build.
const TICKS_PER_SEC = 100;

/**
 * CPU this thread has used so far (user + system), where /proc shows it (Linux): the
 * write's own cost, which the batch's round trip overstates whenever the event loop
 * holds the core the thread needs.
 */
function threadCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) start at state, field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SEC;
  } catch {
    return undefined;
  }
}
