// kill -9 in the middle of load: the ledger must come back consistent, with no
// reservation left open and every stored charge matching a stored usage record.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/kysely-store.js';
import { jsonOf } from '../helpers/json.js';
import { startServer } from '../helpers/server-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-crash-'));
const env = { LMGATE_CONFIG: join(dataDir, 'lmgate.yaml'), LMGATE_DATA_DIR: dataDir };

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

writeFileSync(
  join(dataDir, 'lmgate.yaml'),
  [
    'log: { level: warn }',
    'demo: { seed_account: true, credits: 1000 }',
    'default_tier: wide',
    'tiers:',
    '  wide: { rpm: 1000000, tpm: 1000000000, concurrency: 1000, models: ["*"] }',
    'models:',
    '  priced-echo: { backend: demo, kind: echo, tokens_per_sec: 0, price: { input: 100, output: 100 } }',
  ].join('\n'),
);

describe('kill -9 under load', () => {
  it('restarts with a consistent ledger, no open reservation, and charges matching usage records', async () => {
    // The demo key is printed once, at the first start.
    const first = await startServer(env, /sk-lmg-[0-9A-Za-z]{49}\n/);
    const apiKey = /sk-lmg-[0-9A-Za-z]+/.exec(first.output())![0];
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ model: 'priced-echo', messages: [{ role: 'user', content: 'load before the crash' }] });

    let succeeded = 0;
    let stop = false;
    const workers = Array.from({ length: 16 }, async () => {
      while (!stop) {
        const res = await fetch(`${first.origin}/v1/chat/completions`, { method: 'POST', headers, body }).catch(() => undefined);
        if (res?.status === 200) succeeded++;
        await res?.arrayBuffer().catch(() => undefined);
      }
    });
    while (succeeded < 300) await new Promise((resolve) => setTimeout(resolve, 10));
    first.child.kill('SIGKILL');
    stop = true;
    await Promise.all(workers);

    const second = await startServer(env);
    const billing = await jsonOf(await fetch(`${second.origin}/api/billing/subscription`, { headers }));
    expect(billing.reserved.micros).toBe(0);

    const store = openStore({ sqlitePath: join(dataDir, 'lmgate.db') });
    try {
      const account = (await store.listAccounts())[0]!;
      const balance = await store.balanceOf(account.id);
      expect(await store.sumLedger(account.id)).toBe(balance);
      expect(billing.balance.micros).toBe(balance);
      const usage = await store.listUsage(account.id, { limit: 100_000 });
      expect(usage.length).toBeGreaterThan(0);
      expect(balance).toBe(1000_000_000 - usage.reduce((sum, u) => sum + u.costMicros, 0));
      // Every usage entry in the ledger belongs to a stored usage record.
      const ledger = await store.listLedger(account.id, { limit: 100_000 });
      const usageIds = new Set(usage.map((u) => u.id));
      for (const entry of ledger.filter((e) => e.kind === 'usage')) expect(usageIds.has(entry.reference!)).toBe(true);
    } finally {
      await store.close();
    }

    // And the restarted server keeps charging normally.
    expect((await fetch(`${second.origin}/v1/chat/completions`, { method: 'POST', headers, body })).status).toBe(200);
  }, 60_000);
});
