// What every command starts from: the same config and store the server uses.
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { openStore } from '../store/kysely-store.js';
import type { Actor, Store } from '../store/store.js';

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /**
   * Writes part of a large output (lines with their ends), settled once the reader can take
   * more: an export of millions of rows into a slow pipe waits instead of queueing in
   * memory. Without it, the lines go through `out`.
   */
  write?: (chunk: string) => Promise<void>;
  /** Where a secret is read from (cli/secret-input.ts); the process's stdin when unset. */
  secretInput?: NodeJS.ReadableStream;
}

/** The write's callback reports the error; the event is the same one again. */
const ignoreStdoutError = (): void => {};

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  write: (chunk) => {
    // A reader that left (`| head`) fails the write's callback with EPIPE, and stdout then
    // also emits it: without a listener that event would crash the process with a stack.
    if (!process.stdout.listeners('error').includes(ignoreStdoutError)) process.stdout.on('error', ignoreStdoutError);
    // The callback comes once the chunk is handed over: a full pipe makes the export wait.
    return new Promise<void>((resolve, reject) => process.stdout.write(chunk, (err) => (err ? reject(err) : resolve())));
  },
};

/** Who the audit log says made a CLI change: the operating-system user running it. */
export function cliActor(): Actor {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    // A user id with no passwd entry (some containers).
    name = String(process.getuid?.() ?? 'unknown');
  }
  return { kind: 'cli', id: name };
}

/** A command's failure meant for the operator: printed without a stack, exit code 1. */
export class CliError extends Error {}

export function storeLocation(config: Config): { databaseUrl?: string; sqlitePath: string } {
  return {
    databaseUrl: config.store.database_url,
    sqlitePath: config.store.sqlite_path ?? join(config.store.data_dir, 'lmgate.db'),
  };
}

/** Opens the store with migrations applied, runs `fn`, and always closes it. */
export async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(storeLocation(config));
  try {
    await store.migrate();
    return await fn(store);
  } finally {
    await store.close();
  }
}

export { loadConfig };
