// SIGTERM as a deploy sends it: the process drains its streams, writes what it charged,
// and exits 0 on its own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/kysely-store.js';
import { startServer } from '../helpers/server-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-sigterm-'));
const env = { LMGATE_CONFIG: join(dataDir, 'lmgate.yaml'), LMGATE_DATA_DIR: dataDir };

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

writeFileSync(
  join(dataDir, 'lmgate.yaml'),
  [
    'log: { level: warn }',
    'server: { drain_seconds: 1 }',
    'demo: { seed_account: true, credits: 1000 }',
    'models:',
    '  slow-lorem: { backend: demo, kind: lorem, tokens_per_sec: 20, price: { input: 1000, output: 1000 } }',
    'tiers:',
    '  free: { rpm: 1000, tpm: 10000000, concurrency: 10, models: ["*"] }',
  ].join('\n'),
);

describe('SIGTERM', () => {
  it('ends a running stream at the drain time with an error event, charges what it delivered, and exits 0', async () => {
    const server = await startServer(env, /sk-lmg-[0-9A-Za-z]{49}\n/);
    const apiKey = /sk-lmg-[0-9A-Za-z]+/.exec(server.output())![0];
    const res = await fetch(`${server.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow-lorem', stream: true, max_tokens: 1_000, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const text = res.text();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const signalledAtMs = performance.now();
    server.child.kill('SIGTERM');

    const events = (await text).split('\n\n').filter((event) => event.startsWith('data: '));
    expect(JSON.parse(events.at(-1)!.slice(6)).error).toMatchObject({ code: 503 });
    expect(await server.exited).toBe(0);
    expect(performance.now() - signalledAtMs).toBeLessThan(5_000);

    const store = openStore({ sqlitePath: join(dataDir, 'lmgate.db') });
    try {
      const account = (await store.listAccounts())[0]!;
      const [usage] = await store.listUsage(account.id, { limit: 10 });
      expect(usage).toMatchObject({ status: 503, streamed: true });
      expect(usage!.completionTokens).toBeGreaterThan(5);
      expect(usage!.costMicros).toBeGreaterThan(0);
      const balance = await store.balanceOf(account.id);
      expect(balance).toBe(1_000_000_000 - usage!.costMicros);
      expect(await store.sumLedger(account.id)).toBe(balance);
    } finally {
      await store.close();
    }
  }, 30_000);
});
