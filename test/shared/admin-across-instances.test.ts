// The admin API in shared mode: a suspension, a reactivation and a revocation made through
// one instance's admin API reach another instance's /v1 within a second, by the change
// channel (the store's feed is polled only once a minute here, so it cannot be what delivers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPES } from '../../src/auth/admin-key.js';
import { Commands } from '../../src/commands/commands.js';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';

const DEADLINE_MS = 1_000;

/** Asks `origin`'s /v1 with `apiKey` until it answers `status`; returns how long that took. */
async function untilStatus(origin: string, apiKey: string, status: number): Promise<number> {
  const since = performance.now();
  for (;;) {
    const response = await fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
    await response.arrayBuffer();
    if (response.status === status) return performance.now() - since;
    if (performance.now() - since > 5 * DEADLINE_MS) throw new Error(`${origin} still answers ${response.status}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('admin changes across instances', () => {
  let cluster: TestCluster;
  let adminKey: string;
  beforeAll(async () => {
    cluster = await startCluster(2, {}, { changePollMs: 60_000 });
    adminKey = (await new Commands(cluster.store).adminKeys.create('ops', [...ADMIN_SCOPES], { kind: 'cli', id: 'test' })).secret;
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it(`reach the other instance's /v1 within ${DEADLINE_MS} ms`, async () => {
    const [a, b] = cluster.instances as [TestCluster['instances'][number], TestCluster['instances'][number]];
    const { account, apiKey } = await cluster.createAccount({ micros: 1_000_000 });
    expect(await untilStatus(b.origin, apiKey, 200)).toBeLessThan(DEADLINE_MS);
    const admin = (path: string) => fetch(`${a.origin}/api/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}` } });

    expect((await admin(`/accounts/${account.id}/suspend`)).status).toBe(200);
    expect(await untilStatus(b.origin, apiKey, 403)).toBeLessThan(DEADLINE_MS);
    expect((await admin(`/accounts/${account.id}/reactivate`)).status).toBe(200);
    expect(await untilStatus(b.origin, apiKey, 200)).toBeLessThan(DEADLINE_MS);
    const [key] = await cluster.store.listKeys(account.id);
    expect((await admin(`/keys/${key!.id}/revoke`)).status).toBe(200);
    expect(await untilStatus(b.origin, apiKey, 401)).toBeLessThan(DEADLINE_MS);
  });
});
