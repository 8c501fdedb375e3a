// What the webhook suites share: a migrated store of either kind with an account, the
// commands, a worker on a clock the test moves (Date itself is faked, so the
// standardwebhooks package's timestamp check sees the same time), and a receiver.
import { vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Commands } from '../../src/commands/commands.js';
import type { Account, Store } from '../../src/store/store.js';
import { WebhookWorker, type WebhookWorkerOptions } from '../../src/webhooks/worker.js';
import type { ReceivedWebhook } from '../helpers/webhook-receiver.js';
import type { StoreBackend, OpenedStore } from '../helpers/store-backends.js';

export const START = Date.parse('2026-03-01T12:00:00.000Z');

export interface WebhookFixture {
  opened: OpenedStore;
  store: Store;
  commands: Commands;
  account: Account;
  worker(options?: WebhookWorkerOptions, store?: Store): WebhookWorker;
  /** Moves the (faked) clock forward. */
  advance(ms: number): void;
  close(): Promise<void>;
}

let accounts = 0;

export async function openWebhookFixture(backend: StoreBackend): Promise<WebhookFixture> {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(START);
  const opened = await backend.open();
  const store = opened.store;
  await store.migrate();
  const account = await store.createAccount({ email: `hooks${++accounts}-${process.pid}@example.test`, tier: 'free' });
  const workers: WebhookWorker[] = [];
  return {
    opened,
    store,
    commands: new Commands(store),
    account,
    worker: (options = {}, on = store) => {
      // The receivers are on loopback.
      const worker = new WebhookWorker(on, { now: () => Date.now(), timeoutMs: 2_000, allowPrivateAddresses: true, ...options });
      workers.push(worker);
      return worker;
    },
    advance: (ms) => vi.setSystemTime(Date.now() + ms),
    close: async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await store.close();
      await opened.cleanup();
      vi.useRealTimers();
    },
  };
}

/** Verifies with the standardwebhooks package, as a receiver would; throws when it does not verify. */
export function verified(secret: string, request: ReceivedWebhook): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(request.body, headersOf(request)) as { type: string; timestamp: string; data: Record<string, unknown> };
}

export function headersOf(request: ReceivedWebhook): Record<string, string> {
  const pick = (name: string): string => String(request.headers[name] ?? '');
  return { 'webhook-id': pick('webhook-id'), 'webhook-timestamp': pick('webhook-timestamp'), 'webhook-signature': pick('webhook-signature') };
}
