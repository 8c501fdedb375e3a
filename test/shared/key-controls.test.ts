// A key's controls across instances of one shared deployment: a change made on one
// instance is enforced by the others at once (pub/sub; the change feed is polled here only
// once a minute, so it cannot be what delivers), and a key's own requests per minute are
// counted once for all instances, in Redis.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';

const HI = [{ role: 'user' as const, content: 'hi' }];
const DEADLINE_MS = 1_000;
const ROOMY = { tiers: { free: { rpm: 100_000, tpm: 10_000_000, concurrency: 64, models: ['demo-*'] } } };

describe('per-key controls across instances', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster(2, ROOMY, { changePollMs: 60_000 });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it(`a model limit set on one instance refuses on the other within ${DEADLINE_MS} ms`, async () => {
    const { account, apiKey } = await cluster.createAccount({ micros: 10_000_000 });
    const [key] = await cluster.store.listKeys(account.id);
    const [first, second] = cluster.instances;
    const client = second!.client(apiKey);
    await client.chat.completions.create({ model: 'demo-lorem', messages: HI, max_tokens: 4 }); // cached on the second

    const since = performance.now();
    await first!.app.commands.keys.update(key!.id, { controls: { allowedModels: ['demo-echo'] } });
    for (;;) {
      const refused = await client.chat.completions.create({ model: 'demo-lorem', messages: HI, max_tokens: 4 }).then(
        () => false,
        (err: unknown) => {
          expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
          expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ reason: 'key_model_not_allowed' });
          return true;
        },
      );
      if (refused) break;
      expect(performance.now() - since).toBeLessThan(DEADLINE_MS);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await client.chat.completions.create({ model: 'demo-echo', messages: HI });
  });

  it('counts a key’s own requests per minute once across instances', async () => {
    const { account, apiKey } = await cluster.createAccount({ micros: 10_000_000 });
    const [key] = await cluster.store.listKeys(account.id);
    await cluster.instances[0]!.app.commands.keys.update(key!.id, { controls: { rpm: 3 } });
    const clients = cluster.instances.map((instance) => instance.client(apiKey));
    // Neither instance has seen the key yet: each loads it, its limit included, from the store.
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      outcomes.push(
        await clients[i % 2]!.chat.completions.create({ model: 'demo-echo', messages: HI }).then(
          () => 'ok',
          (err: unknown) => ((err as InstanceType<typeof OpenAI.APIError>).error as { reason?: string }).reason ?? String(err),
        ),
      );
    }
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'key_rate_limit']);
  });

  it('counts no refused request against a limit, and every refusal carries the rate-limit headers, as on one instance', async () => {
    const { account, apiKey } = await cluster.createAccount({ micros: 10_000_000 });
    const [key] = await cluster.store.listKeys(account.id);
    await cluster.instances[0]!.app.commands.keys.update(key!.id, { controls: { rpm: 3, allowedModels: ['demo-echo'] } });
    const client = cluster.instances[1]!.client(apiKey);
    const refused = async (request: Promise<unknown>) => request.then(() => expect.unreachable('the request succeeded'), (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
    const errors = [
      await refused(client.chat.completions.create({ model: 'demo-lorem', messages: HI })),
      await refused(client.chat.completions.create({ model: 'demo-nothing', messages: HI })),
      await refused(client.chat.completions.create({ model: 'demo-echo', messages: [] })),
    ];
    expect(errors.map((err) => err.status)).toEqual([403, 404, 422]);
    for (const err of errors) {
      expect(err.headers!.get('x-ratelimit-limit'), String(err.status)).toBe('100000');
      expect(Number(err.headers!.get('x-ratelimit-remaining'))).toBeGreaterThan(99_000);
      expect(Number(err.headers!.get('x-ratelimit-reset'))).toBeGreaterThan(0);
    }
    // The key's limit is still whole: the refusals gave back what they took.
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < 4; i++) outcomes.push(await client.chat.completions.create({ model: 'demo-echo', messages: HI }).then(() => 200, (err: InstanceType<typeof OpenAI.APIError>) => err.status ?? String(err)));
    expect(outcomes).toEqual([200, 200, 200, 429]);
  });
});
