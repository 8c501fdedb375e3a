// Shared mode's failure throttle (web-session/sign-in-throttle.ts): the same exact sliding
// window, kept in Redis so that failures count across every instance. Per key, a sorted set
// of failure times holding at most `limit` of them, expiring with the window.
import type { Redis } from 'ioredis';
import { throttledError, type FailureThrottle } from '../web-session/sign-in-throttle.js';
import { LuaScript } from './lua-script.js';

/**
 * KEYS: the key's failures. ARGV: window ms, limit, 1 to record a failure (0 to check).
 * Returns {failures in the window, the oldest of the last `limit` (ms), now (ms)}.
 */
const FAILURES = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], now, now .. '-' .. redis.call('INCR', KEYS[1] .. ':n'))
  redis.call('PEXPIRE', KEYS[1] .. ':n', window)
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -limit - 1)
  redis.call('PEXPIRE', KEYS[1], window)
end
local count = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], -limit, -limit, 'WITHSCORES')[2]
return {count, tonumber(oldest or now), now}
`);

export class SharedFailureThrottle implements FailureThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  async assertAllowed(key: string): Promise<void> {
    const [count, oldestMs, nowMs] = (await FAILURES.run(this.redis, [this.keyOf(key)], [this.windowMs, this.limit, 0])) as number[];
    if (count! >= this.limit) throw throttledError(this.limit, this.windowMs, oldestMs!, nowMs!);
  }

  async recordFailure(key: string): Promise<void> {
    await FAILURES.run(this.redis, [this.keyOf(key)], [this.windowMs, this.limit, 1]);
  }

  async forget(key: string): Promise<void> {
    const at = this.keyOf(key);
    await this.redis.del(at, `${at}:n`);
  }

  private keyOf(key: string): string {
    return `${this.prefix}:${key}`;
  }
}
