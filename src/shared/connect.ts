// Shared mode from the configuration: the Redis connections, with bounded timeouts so an
// unreachable or slow Redis fails a request quickly instead of holding it, and the admission.
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import type { Config } from '../config/schema.js';
import type { UsageWriteObserver } from '../billing/usage-writer.js';
import type { Store } from '../store/store.js';
import { SharedAdmission } from './shared-admission.js';
import { SharedState } from './shared-state.js';
import { UsageStreamWriter } from './usage-stream-writer.js';

/** A command not answered within this fails: the request gets a quick error, not a hang. */
const COMMAND_TIMEOUT_MS = 500;
const CONNECT_TIMEOUT_MS = 1_000;
/** A reservation or slot of an instance that stopped renewing it (crashed) lasts this long. */
export const LEASE_MS = 30_000;

export interface SharedOptions {
  /** Key prefix (tests give each suite its own). */
  prefix?: string;
  leaseMs?: number;
  onError: (err: unknown) => void;
  observer?: UsageWriteObserver;
}

export async function openSharedAdmission(config: Config, store: Store, options: SharedOptions): Promise<SharedAdmission> {
  const url = config.redis.url!;
  const connect = (commandTimeout: number | undefined): Redis =>
    new Redis(url, {
      commandTimeout,
      connectTimeout: CONNECT_TIMEOUT_MS,
      // Fail fast while disconnected rather than queueing commands behind the outage.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
  const redis = connect(COMMAND_TIMEOUT_MS);
  // The usage stream's blocking reads hold a connection of their own.
  const reader = connect(undefined);
  redis.on('error', options.onError);
  reader.on('error', options.onError);
  await Promise.all([redis.connect(), reader.connect()]);
  const state = new SharedState(redis, store, { prefix: options.prefix ?? 'lmgate', leaseMs: options.leaseMs ?? LEASE_MS, onError: options.onError });
  const consumer = `${hostname()}-${process.pid}-${Date.now().toString(36)}`;
  const writer = new UsageStreamWriter(state, reader, store, { consumer, onError: options.onError, observer: options.observer });
  return new SharedAdmission(state, writer, options.onError, () => {
    redis.disconnect();
    reader.disconnect();
  });
}
