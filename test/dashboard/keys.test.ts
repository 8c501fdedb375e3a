// The account's API keys through the dashboard, on SQLite and PostgreSQL: the secret a
// new key shows once works with the openai client, a revoked one fails at once, and
// another account's keys are unreachable.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { expectUnifiedError, sessionClient, type DashboardClient } from './dashboard-client.js';

const CHAT = { model: 'demo-echo', messages: [{ role: 'user' as const, content: 'hello' }] };

describe.each(['sqlite', 'postgres'] as const)('dashboard keys on %s', (database) => {
  let t: TestApp;
  let alice: DashboardClient;
  let bob: DashboardClient;

  beforeAll(async () => {
    t = await startApp({ database });
    [alice, bob] = await Promise.all([sessionClient(t), sessionClient(t)]);
  });
  afterAll(() => t.close());

  it('a new account has no keys; created keys are listed newest first, the secret only at creation', async () => {
    expect((await alice.get('/keys')).body).toEqual({ keys: [] });
    const first = await alice.post('/keys', { name: 'laptop' });
    expect(first.status).toBe(201);
    expect(first.body.secret).toMatch(/^sk-lmg-[0-9A-Za-z]{49}$/);
    expect(first.body.key).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'laptop',
      prefix: first.body.secret.slice(0, 11),
      lastFour: first.body.secret.slice(-4),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      status: 'active',
      leaked: false,
      leakUrl: null,
      expiresAt: null,
      expired: false,
      allowedModels: null,
      allowedIps: null,
      rpm: null,
      creditLimitMicros: null,
      creditLimitPeriod: null,
      creditSpentMicros: null,
    });
    const second = await alice.post('/keys', { name: '  ci  ' });
    expect(second.body.key.name).toBe('ci');
    const list = await alice.get('/keys');
    expect(list.body.keys.map((k: { id: string }) => k.id)).toEqual([second.body.key.id, first.body.key.id]);
    expect(list.text).not.toContain(first.body.secret);
    expect(await t.store.findKeyById(first.body.key.id)).toMatchObject({ accountId: alice.account.id });
  });

  it('a key name must be 1 to 100 characters (422)', async () => {
    for (const name of ['', '   ', 'x'.repeat(101)]) {
      const res = await alice.post('/keys', { name });
      expectUnifiedError(res, 422);
      expect(res.body.errors).toEqual([{ field: 'name', message: expect.any(String) }]);
    }
    expectUnifiedError(await alice.post('/keys', {}), 422);
  });

  it('a created key works with the openai client, and gets 401 key_revoked right after the DELETE', async () => {
    await t.store.appendLedgerEntry({ accountId: alice.account.id, kind: 'grant', amountMicros: 1_000_000 });
    const created = await alice.post('/keys', { name: 'to revoke' });
    const client = t.client(created.body.secret);
    const answer = await client.chat.completions.create(CHAT);
    expect(answer.choices[0]!.message.content).toBe('hello');

    // Without the change feed, only the dashboard's own invalidation can make this pass.
    await t.app.changeFeed.stop();
    try {
      const res = await alice.delete(`/keys/${created.body.key.id}`);
      expect(res.status).toBe(200);
      expect(res.body.key).toMatchObject({ id: created.body.key.id, status: 'revoked', revokedAt: expect.any(String) });
      const err = await client.chat.completions.create(CHAT).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((err as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('key_revoked');
    } finally {
      await t.app.changeFeed.start();
    }

    // Idempotent: the same revoked key, the same time.
    const again = await alice.delete(`/keys/${created.body.key.id}`);
    expect(again.status).toBe(200);
    expect(again.body.key.revokedAt).toBe((await t.store.findKeyById(created.body.key.id))!.revokedAt);
    const listed = (await alice.get('/keys')).body.keys.find((k: { id: string }) => k.id === created.body.key.id);
    expect(listed.status).toBe('revoked');
  });

  it("another account's key is 404 on DELETE, untouched, and never listed", async () => {
    const bobs = await bob.post('/keys', { name: "bob's" });
    const res = await alice.delete(`/keys/${bobs.body.key.id}`);
    expectUnifiedError(res, 404, 'Key not found.');
    expect((await t.store.findKeyById(bobs.body.key.id))!.revokedAt).toBeNull();
    expectUnifiedError(await alice.delete('/keys/key_doesnotexist00000000'), 404);
    const aliceKeys = (await alice.get('/keys')).body.keys.map((k: { id: string }) => k.id);
    expect(aliceKeys).not.toContain(bobs.body.key.id);
    expect((await bob.get('/keys')).body.keys.map((k: { id: string }) => k.id)).toEqual([bobs.body.key.id]);
  });

  it('keys need a session (401) and the CSRF token to change (403)', async () => {
    const anonymous = await fetch(`${t.origin}/api/dashboard/keys`);
    expect(anonymous.status).toBe(401);
    const keys = (await alice.get('/keys')).body.keys;
    expectUnifiedError(await alice.delete(`/keys/${keys[0].id}`, { csrf: null }), 403);
  });
});
