// Two deployments on one Redis stay apart: each one's prefix, by default derived from its
// store (the database URL without user or password), is on every key and channel, so one
// deployment's change messages never reach the other, even on another database number
// (pub/sub ignores it); a stray message on a deployment's channel is dropped quietly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { ChangeChannel } from '../../src/shared/change-channel.js';
import { deploymentPrefix } from '../../src/shared/deployment-prefix.js';
import type { Change } from '../../src/store/store.js';
import { TEST_REDIS_URL, testRedis, type TestRedis } from '../helpers/redis.js';

function configOf(databaseUrl: string, keyPrefix?: string) {
  return loadConfig({ env: {}, cwd: '/nonexistent', overrides: { store: { database_url: databaseUrl }, redis: { url: `${TEST_REDIS_URL}/9`, ...(keyPrefix ? { key_prefix: keyPrefix } : {}) } } });
}

describe('the deployment prefix', () => {
  it('is derived from the database, not from the credentials that reach it; redis.key_prefix overrides it', () => {
    const a = deploymentPrefix(configOf('postgres://app:secret@db.internal:5432/billing'));
    expect(a).toMatch(/^lmgate:[0-9a-f]{12}$/);
    expect(deploymentPrefix(configOf('postgres://other:changed@DB.internal/billing'))).toBe(a);
    expect(deploymentPrefix(configOf('postgres://app:secret@db.internal:5432/staging'))).not.toBe(a);
    expect(a).not.toContain('secret');
    expect(deploymentPrefix(configOf('postgres://app:secret@db.internal:5432/billing', 'acme'))).toBe('acme');
  });
});

describe('change messages of two deployments on one Redis', () => {
  let redis: TestRedis;
  beforeAll(() => {
    redis = testRedis();
  });
  afterAll(async () => {
    await redis.cleanup();
  });

  /** An instance's channel, with what it applied and the errors it reported. */
  async function instance(prefix: string) {
    const applied: Change[] = [];
    const errors: unknown[] = [];
    const channel = new ChangeChannel(redis.connect(), redis.connect(), prefix, (err) => errors.push(err));
    await channel.subscribe((change) => applied.push(change));
    return { channel, applied, errors };
  }

  it('each deployment hears its own instances only, and drops strays without an error', async () => {
    // Both prefixes derived, from two databases, as two deployments' defaults would be.
    const prefixA = `${redis.prefix}:${deploymentPrefix(configOf('postgres://u:p@127.0.0.1:5432/deployment_a'))}`;
    const prefixB = `${redis.prefix}:${deploymentPrefix(configOf('postgres://u:p@127.0.0.1:5432/deployment_b'))}`;
    expect(prefixA).not.toBe(prefixB);
    const a1 = await instance(prefixA);
    const a2 = await instance(prefixA);
    const b1 = await instance(prefixB);

    a1.channel.publish({ kind: 'account', subjectId: 'acct_a' });
    b1.channel.publish({ kind: 'key', subjectId: 'key_b' });
    // Strays on A's channel: another deployment's message under the same channel name, and
    // text that is no change message at all.
    const raw = redis.connect();
    await raw.publish(`${prefixA}:changes`, JSON.stringify({ kind: 'balance', subjectId: 'acct_x', origin: 'elsewhere', deployment: prefixB }));
    await raw.publish(`${prefixA}:changes`, 'not json');
    await raw.publish(`${prefixA}:changes`, 'null');
    a2.channel.publish({ kind: 'balance', subjectId: 'acct_a2' });

    await expect.poll(() => a1.applied.length).toBe(1);
    await expect.poll(() => a2.applied.length).toBe(1);
    // The last message sent was seen; everything before it has been delivered.
    expect(a1.applied).toEqual([{ kind: 'balance', subjectId: 'acct_a2' }]);
    expect(a2.applied).toEqual([{ kind: 'account', subjectId: 'acct_a' }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(b1.applied).toEqual([]);
    expect([...a1.errors, ...a2.errors, ...b1.errors]).toEqual([]);
  });
});
