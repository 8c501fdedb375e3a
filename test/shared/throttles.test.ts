// The dashboard's failure throttles count across instances in shared mode: five wrong
// passwords spread over two instances lock the account on both, as on one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Commands } from '../../src/commands/commands.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { jsonOf } from '../helpers/json.js';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster(2);
}, 60_000);
afterAll(() => cluster?.close());

function signIn(origin: string, email: string, password: string): Promise<Response> {
  return fetch(`${origin}/api/dashboard/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ email, password }),
  });
}

describe('sign-in throttle across instances', () => {
  it('refuses the sixth attempt on any instance after five failures spread over both', async () => {
    const { account } = await cluster.createAccount({ micros: 0 });
    await new Commands(cluster.store).accounts.setPassword(account.id, await hashPassword('right password 1'));
    const [a, b] = cluster.instances.map((instance) => instance.origin) as [string, string];

    for (let i = 0; i < 5; i++) expect((await signIn(i % 2 === 0 ? a : b, account.email, 'wrong password')).status).toBe(401);
    for (const origin of [a, b]) {
      const refused = await signIn(origin, account.email, 'right password 1');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(800);
      expect((await jsonOf(refused)).error).toMatchObject({ code: 429 });
    }
  });

  it('a success forgets the failures on every instance', async () => {
    const { account } = await cluster.createAccount({ micros: 0 });
    await new Commands(cluster.store).accounts.setPassword(account.id, await hashPassword('right password 2'));
    const [a, b] = cluster.instances.map((instance) => instance.origin) as [string, string];
    for (let i = 0; i < 4; i++) await signIn(a, account.email, 'wrong password');
    expect((await signIn(b, account.email, 'right password 2')).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await signIn(a, account.email, 'wrong password')).status).toBe(401);
    expect((await signIn(b, account.email, 'right password 2')).status).toBe(200);
  });
});
