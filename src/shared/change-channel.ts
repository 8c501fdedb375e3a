// Shared mode's fast path for changes: an instance that changes an account, a key or a
// balance publishes it on a Redis channel, and every other instance applies it at once
// (milliseconds). The store's change feed stays the durable path: what is missed while
// Redis is away, or changed by the CLI, arrives with its next poll.
//
// The channel is the deployment's (`<prefix>:changes`, shared/deployment-prefix.ts), and
// each message names its deployment too: pub/sub ignores Redis database numbers, so a
// message of another deployment, or one that is not a change at all, is dropped quietly.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Change } from '../store/store.js';

const KINDS = new Set(['key', 'account', 'balance']);

interface ChangeMessage extends Change {
  /** The instance that sent it: its own messages come back to it, applied already. */
  origin: string;
  /** The deployment's prefix. */
  deployment: string;
}

export class ChangeChannel {
  private readonly origin = randomUUID();
  private readonly channel: string;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly onError: (err: unknown) => void,
  ) {
    this.channel = `${prefix}:changes`;
  }

  async subscribe(apply: (change: Change) => void): Promise<void> {
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      const message = parse(text);
      if (message === undefined || message.deployment !== this.prefix || message.origin === this.origin) return;
      apply({ kind: message.kind, subjectId: message.subjectId });
    });
    await this.subscriber.subscribe(this.channel);
  }

  /** Best effort: a lost message is delivered by the change feed instead. */
  publish(change: Change): void {
    const message: ChangeMessage = { kind: change.kind, subjectId: change.subjectId, origin: this.origin, deployment: this.prefix };
    this.publisher.publish(this.channel, JSON.stringify(message)).catch(this.onError);
  }
}

function parse(text: string): ChangeMessage | undefined {
  try {
    const value = JSON.parse(text) as Partial<ChangeMessage> | null;
    if (typeof value !== 'object' || value === null) return undefined;
    if (typeof value.kind !== 'string' || !KINDS.has(value.kind) || typeof value.subjectId !== 'string') return undefined;
    if (typeof value.origin !== 'string' || typeof value.deployment !== 'string') return undefined;
    return value as ChangeMessage;
  } catch {
    return undefined;
  }
}
