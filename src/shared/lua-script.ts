// A Lua script run by its SHA-1 (EVALSHA), sent whole only the first time a Redis server
// has not seen it (after a restart, say): one round trip either way once cached.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SharedStateUnavailableError } from '../errors.js';

export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script; a Redis that cannot answer (down, timed out) is a SharedStateUnavailableError. */
  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      try {
        return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return await redis.eval(this.source, keys.length, ...keys, ...args);
      }
    } catch (err) {
      // A script's own error (a bug) stays what it is; connection trouble is an outage.
      if (err instanceof Error && /ERR|WRONGTYPE/.test(err.message.slice(0, 10))) throw err;
      throw new SharedStateUnavailableError({ cause: err });
    }
  }
}

interface Item {
  keys: readonly string[];
  args: readonly (string | number)[];
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * A script of `batched` items (counter-scripts.ts) on one connection: the items asked for during one
 * turn of the event loop go to Redis together, in one call, when the turn's I/O is done
 * (setImmediate). Under load that is one command, one socket write and one reply for many
 * requests; alone, an item waits for nothing but the end of its turn.
 */
export class BatchedScript {
  private readonly script: LuaScript;
  private queue: Item[] = [];

  constructor(
    source: string,
    private readonly redis: Redis,
    /** Items per call at most, so one call never holds Redis for long. */
    private readonly maxItems = 100,
  ) {
    this.script = new LuaScript(source);
  }

  run(keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ keys, args, resolve, reject });
    });
  }

  private flush(): void {
    const queue = this.queue;
    this.queue = [];
    for (let at = 0; at < queue.length; at += this.maxItems) void this.send(queue.slice(at, at + this.maxItems));
  }

  private async send(items: Item[]): Promise<void> {
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const item of items) {
      keys.push(...item.keys);
      args.push(item.keys.length, item.args.length, ...item.args);
    }
    try {
      const replies = (await this.script.run(this.redis, keys, args)) as unknown[];
      items.forEach((item, i) => item.resolve(replies[i]));
    } catch (err) {
      for (const item of items) item.reject(err);
    }
  }
}
