// The local Redis server for shared-mode suites, under a key prefix of each suite's own so
// suites never see each other's keys; the prefix's keys are deleted afterwards. A missing
// server fails the suite (it is never skipped).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestRedis {
  prefix: string;
  /** A new connection (each instance under test has its own). */
  connect(): Redis;
  /** Deletes the prefix's keys and closes every connection made here. */
  cleanup(): Promise<void>;
}

export function testRedis(): TestRedis {
  const prefix = `lmgate-test-${randomBytes(5).toString('hex')}`;
  const connections: Redis[] = [];
  const connect = (): Redis => {
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    connections.push(redis);
    return redis;
  };
  return {
    prefix,
    connect,
    async cleanup() {
      const admin = connect();
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) await admin.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await Promise.all(connections.map((redis) => redis.quit()));
    },
  };
}
