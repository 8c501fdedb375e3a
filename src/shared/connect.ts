// Shared mode from the configuration: the Redis connections, with bounded timeouts so an
// unreachable or slow Redis fails a request quickly instead of holding it; the admission,
// and the channel on which instances announce changes to each other.
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import type { Config } from '../config/schema.js';
import { ConnectionError, describeNetworkFailure, redactUrl } from '../store/connection-error.js';
import type { UsageWriteObserver } from '../billing/usage-writer.js';
import type { CreditSource, UsageStreamSink } from '../store/queries.js';
import type { FailureThrottleFactory } from '../web-session/sign-in-throttle.js';
import { ChangeChannel } from './change-channel.js';
import { deploymentPrefix } from './deployment-prefix.js';
import { SharedFailureThrottle } from './shared-throttle.js';
import { SharedAdmission } from './shared-admission.js';
import { SharedState } from './shared-state.js';
import { UsageStreamWriter } from './usage-stream-writer.js';
import { CalibrationSync } from './calibration-sync.js';

/** A command not answered within this fails: the request gets a quick error, not a hang. */
const COMMAND_TIMEOUT_MS = 500;
const CONNECT_TIMEOUT_MS = 1_000;
export interface SharedOptions {
  /** Key prefix; the deployment's (redis.key_prefix, or derived from the store) when absent (tests give each suite its own). */
  prefix?: string;
  onError: (err: unknown) => void;
  observer?: UsageWriteObserver;
}

export interface SharedMode {
  admission: SharedAdmission;
  changes: ChangeChannel;
  /** Sign-in, sign-up and redemption throttles that count across instances. */
  throttle: FailureThrottleFactory;
  /** What the models' servers count in a prompt, learned from every instance's answers. */
  calibrations: CalibrationSync;
}

export async function openSharedMode(config: Config, store: CreditSource & UsageStreamSink, options: SharedOptions): Promise<SharedMode> {
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
  // The usage stream's blocking reads, and the change channel's subscription, hold
  // connections of their own.
  const reader = connect(undefined);
  const subscriber = connect(undefined);
  await connectAll(url, [redis, reader, subscriber]);
  for (const connection of [redis, reader, subscriber]) connection.on('error', options.onError);
  const prefix = options.prefix ?? deploymentPrefix(config);
  // A reservation or slot of an instance that stopped renewing it (crashed) lasts this long,
  // and so do the usage records it read from the stream but did not store.
  const leaseMs = config.redis.lease_seconds * 1000;
  const state = new SharedState(redis, store, { prefix, leaseMs, onError: options.onError });
  const consumer = `${hostname()}-${process.pid}-${Date.now().toString(36)}`;
  const writer = new UsageStreamWriter(state, reader, store, { consumer, claimIdleMs: leaseMs, onError: options.onError, observer: options.observer });
  const admission = new SharedAdmission(state, writer, options.onError, () => {
    redis.disconnect();
    reader.disconnect();
    subscriber.disconnect();
  });
  return {
    admission,
    changes: new ChangeChannel(redis, subscriber, prefix, options.onError),
    throttle: (name, limit, windowMs) => new SharedFailureThrottle(redis, `${prefix}:throttle:${name}`, limit, windowMs),
    calibrations: new CalibrationSync(redis, prefix, options.onError),
  };
}

/**
 * Connects, or fails once in one line naming the server: ioredis would otherwise report
 * every retry as an error event and keep retrying in the background.
 */
async function connectAll(url: string, connections: Redis[]): Promise<void> {
  let lastError: unknown;
  const remember = (err: unknown): void => {
    lastError = err;
  };
  for (const connection of connections) connection.on('error', remember);
  try {
    await Promise.all(connections.map((connection) => connection.connect()));
  } catch (err) {
    for (const connection of connections) connection.disconnect();
    throw redisFailure(lastError ?? err, url);
  } finally {
    for (const connection of connections) connection.off('error', remember);
  }
}

function redisFailure(err: unknown, url: string): ConnectionError {
  const where = `Redis at ${redactUrl(url)}`;
  const message = err instanceof Error ? err.message : String(err);
  const network = describeNetworkFailure(err);
  if (network) return new ConnectionError(`cannot connect to ${where}: ${network}`, { cause: err });
  if (/NOAUTH|WRONGPASS|\bAUTH\b|password|username/i.test(message)) {
    return new ConnectionError(`${where} refused the login: ${message} (check the user and password in REDIS_URL)`, { cause: err });
  }
  if (/DB index is out of range/i.test(message)) return new ConnectionError(`${where}: no such database number (${message})`, { cause: err });
  return new ConnectionError(`cannot connect to ${where}: ${message}`, { cause: err });
}

