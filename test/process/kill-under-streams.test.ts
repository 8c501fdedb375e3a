// kill -9 under 100 concurrent streams on the embedded store, at a random moment, round
// after round: a stream the client saw end ([DONE]) was charged before its last byte, so it
// is in the store after the restart, exactly as its usage chunk said; a stream the kill cut
// is charged at most once, between 0 and what it held.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/kysely-store.js';
import { jsonOf } from '../helpers/json.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

const ROUNDS = Number(process.env.KILL_ROUNDS ?? 3);
const STREAMS = 100;
const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-kill-streams-'));
const env = { LMGATE_CONFIG: join(dataDir, 'lmgate.yaml'), LMGATE_DATA_DIR: dataDir };

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

writeFileSync(
  join(dataDir, 'lmgate.yaml'),
  [
    'log: { level: warn }',
    'demo: { seed_account: true, credits: 100000 }',
    'default_tier: wide',
    'tiers:',
    '  wide: { rpm: 1000000, tpm: 1000000000, concurrency: 1000, models: ["*"] }',
    'models:',
    '  streamer: { backend: demo, kind: lorem, tokens_per_sec: 400, max_output: 64, price: { input: 100, output: 100 } }',
  ].join('\n'),
);

interface Stream {
  requestId: string;
  /** The client read `[DONE]`. */
  done: boolean;
  /** What the usage chunk said it cost, in micro-credits. */
  costMicros?: number;
}

/** One streamed request, read to its end or until the connection dies. */
async function stream(origin: string, apiKey: string, seen: Stream[]): Promise<void> {
  const response = await fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'streamer', stream: true, stream_options: { include_usage: true }, max_tokens: 16 + Math.floor(Math.random() * 48), messages: [{ role: 'user', content: 'go' }] }),
  });
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  const entry: Stream = { requestId: response.headers.get('x-request-id')!, done: false };
  seen.push(entry);
  let text = '';
  const decoder = new TextDecoder();
  for await (const bytes of response.body!) text += decoder.decode(bytes as Uint8Array, { stream: true });
  for (const line of text.split('\n')) {
    if (line === 'data: [DONE]') entry.done = true;
    else if (line.startsWith('data: {')) {
      const chunk = JSON.parse(line.slice(6)) as { usage?: { cost: number } | null };
      if (chunk.usage) entry.costMicros = Math.round(chunk.usage.cost * 1_000_000);
    }
  }
}

describe('kill -9 under 100 streams', () => {
  it(`charges every stream the client saw end, and each cut one at most its hold (${ROUNDS} rounds)`, async () => {
    let server: ServerProcess = await startServer(env, /sk-lmg-[0-9A-Za-z]{49}\n/);
    const apiKey = /sk-lmg-[0-9A-Za-z]+/.exec(server.output())![0];
    let completedInAll = 0;
    let lastMomentInAll = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const seen: Stream[] = [];
      const endedAt = new Map<Stream, number>();
      let running = true;
      const origin = server.origin;
      const workers = Array.from({ length: STREAMS }, async () => {
        while (running) {
          const before = seen.length;
          await stream(origin, apiKey, seen).catch(() => undefined);
          for (const entry of seen.slice(before)) if (entry.done) endedAt.set(entry, performance.now());
        }
      });
      // Once streams are flowing (a restarted server warms up first), at a random moment.
      while (endedAt.size < 10) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 1_000));
      const killedAt = performance.now();
      server.child.kill('SIGKILL');
      running = false;
      await Promise.all(workers);
      await server.exited;

      server = await startServer(env);
      const store = openStore({ sqlitePath: join(dataDir, 'lmgate.db') });
      try {
        const account = (await store.listAccounts())[0]!;
        const records = new Map((await store.listUsage(account.id, { limit: 1_000_000 })).map((record) => [record.requestId, record]));
        const completed = seen.filter((entry) => entry.done);
        expect(completed.length).toBeGreaterThan(0);
        for (const entry of completed) {
          const record = records.get(entry.requestId);
          expect(record, `completed stream ${entry.requestId} charged`).toBeDefined();
          expect(record!.costMicros - record!.shortfallMicros).toBe(entry.costMicros);
        }
        for (const entry of seen.filter((each) => !each.done)) {
          const record = records.get(entry.requestId);
          if (record === undefined) continue;
          expect(record.costMicros - record.shortfallMicros).toBeGreaterThanOrEqual(0);
          expect(record.costMicros - record.shortfallMicros).toBeLessThanOrEqual(record.heldMicros);
        }
        const balance = await store.balanceOf(account.id);
        expect(await store.sumLedger(account.id)).toBe(balance);
        const billing = await jsonOf(await fetch(`${server.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } }));
        expect(billing.reserved.micros).toBe(0);
        expect(billing.balance.micros).toBe(balance);
        completedInAll += completed.length;
        lastMomentInAll += completed.filter((entry) => killedAt - endedAt.get(entry)! < 250).length;
      } finally {
        await store.close();
      }
    }
    console.log(`kill -9 under ${STREAMS} streams, ${ROUNDS} rounds: ${completedInAll} completed streams all charged, ${lastMomentInAll} of them ended in the last 250 ms before a kill`);
    server.child.kill('SIGKILL');
  }, 60_000 + ROUNDS * 20_000);
});
