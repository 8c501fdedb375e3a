// Shared mode's fast path for changes: an instance that changes an account, a key or a
// balance publishes it on a Redis channel, and every other instance applies it at once
// (milliseconds). The store's change feed stays the durable path: what is missed while
// Redis is away, or changed by the CLI, arrives with its next poll.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Change } from '../store/store.js';

const KINDS = new Set(['key', 'account', 'balance']);

export class ChangeChannel {
  /** This instance's own messages come back to it; they were applied already. */
  private readonly origin = randomUUID();
  private readonly channel: string;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    prefix: string,
    private readonly onError: (err: unknown) => void,
  ) {
    this.channel = `${prefix}:changes`;
  }

  async subscribe(apply: (change: Change) => void): Promise<void> {
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      const message = parse(text);
      if (message && message.origin !== this.origin) apply({ kind: message.kind, subjectId: message.subjectId });
    });
    await this.subscriber.subscribe(this.channel);
  }

  /** Best effort: a lost message is delivered by the change feed instead. */
  publish(change: Change): void {
    this.publisher.publish(this.channel, JSON.stringify({ ...change, origin: this.origin })).catch(this.onError);
  }
}

function parse(text: string): (Change & { origin: string }) | undefined {
  try {
    const value = JSON.parse(text) as Partial<Change & { origin: string }>;
    if (typeof value.kind !== 'string' || !KINDS.has(value.kind) || typeof value.subjectId !== 'string' || typeof value.origin !== 'string') return undefined;
    return value as Change & { origin: string };
  } catch {
    return undefined;
  }
}
