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
