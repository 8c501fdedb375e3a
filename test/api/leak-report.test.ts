// POST /api/keys/leak-report: a key found in public is revoked everywhere at once, whoever
// reports it; garbage and unknown keys get the very same answer; reports are rate limited
// per address.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/auth/api-key.js';
import { LEAK_REPORTS_PER_WINDOW } from '../../src/http/routes/leak-report.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp-inbox.js';

const CHAT = { model: 'demo-echo', messages: [{ role: 'user' as const, content: 'hi' }] };

async function report(origin: string, body: unknown, forwardedFor?: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(`${origin}/api/keys/leak-report`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function expectRevoked(client: OpenAI): Promise<void> {
  const err = await client.chat.completions.create(CHAT).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
}

describe('leak report on one instance', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Behind a proxy, so each test reports from an address of its own.
    t = await startApp({ overrides: { server: { trust_proxy: true } } });
  });
  afterAll(async () => t?.close());

  it('revokes a key posted the way GitHub secret scanning posts it, and the account can see why', async () => {
    const { account, apiKey } = await t.createAccount();
    const client = t.client(apiKey);
    await client.chat.completions.create(CHAT);

    const url = 'https://github.com/someone/repo/blob/abc/config.js';
    const res = await report(t.origin, [{ token: apiKey, type: 'lmgate_api_key', url, source: 'content' }], '203.0.113.1');
    expect(res).toMatchObject({ status: 200, body: { received: 1 } });
    await expectRevoked(client);

    const [key] = await t.store.listKeys(account.id);
    expect(key).toMatchObject({ revokedReason: 'leaked', leakUrl: url });
    expect(key!.revokedAt).not.toBeNull();
    // A second report of the same key changes nothing.
    expect(await report(t.origin, { keys: [apiKey] }, '203.0.113.1')).toMatchObject({ status: 200, body: { received: 1 } });
    expect((await t.store.listKeys(account.id))[0]).toMatchObject({ leakUrl: url, revokedAt: key!.revokedAt });
  });

  it('answers garbage, an unknown key and a live key alike, and revokes only the live one', async () => {
    const { apiKey } = await t.createAccount();
    const other = await t.createAccount();
    const unknown = generateApiKey().secret; // a valid checksum, never issued
    const garbage = `${apiKey.slice(0, -1)}${apiKey.endsWith('A') ? 'B' : 'A'}`; // the checksum fails
    const answers = [];
    for (const keys of [[garbage], [unknown], [apiKey], ['not a key at all']]) {
      const res = await report(t.origin, { keys }, '203.0.113.2');
      answers.push({ status: res.status, body: res.body, headers: [...res.headers.keys()].filter((name) => !['x-request-id', 'date'].includes(name)).sort() });
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(answers[0]).toMatchObject({ status: 200, body: { received: 1 } });
    await expectRevoked(t.client(apiKey));
    // The other account's key, never reported, still works.
    await t.client(other.apiKey).chat.completions.create(CHAT);
  });

  it('refuses a body that is no report, in the spec error shape', async () => {
    for (const body of [{}, { keys: [] }, { keys: 'sk-lmg-x' }, [{ url: 'https://x' }], 'sk-lmg-x', { keys: ['a'], extra: 1 }]) {
      const res = await report(t.origin, body, '203.0.113.3');
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body).toMatchObject({ error: { message: expect.any(String) }, errors: expect.any(Object) });
    }
  });

  it(`takes ${LEAK_REPORTS_PER_WINDOW} reports a minute from one address, then 429 with Retry-After`, async () => {
    for (let i = 0; i < LEAK_REPORTS_PER_WINDOW; i++) expect((await report(t.origin, { keys: ['x'] }, '203.0.113.4')).status).toBe(200);
    const refused = await report(t.origin, { keys: ['x'] }, '203.0.113.4');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address is not held back.
    expect((await report(t.origin, { keys: ['x'] }, '203.0.113.5')).status).toBe(200);
  });
});

describe('leak report with mail configured', () => {
  let t: TestApp;
  let inbox: SmtpInbox;
  beforeAll(async () => {
    inbox = await startSmtpInbox();
    t = await startApp({
      overrides: {
        server: { port: 0, public_url: 'https://dash.example.test' },
        smtp: { host: '127.0.0.1', port: inbox.port, secure: false, from: 'lmgate <no-reply@example.test>' },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await inbox?.close();
  });

  it('mails the account owner where the key was found, and nothing for garbage or unknown keys', async () => {
    const { account, apiKey } = await t.createAccount({ email: 'owner-of-leak@example.test' });
    const url = 'https://gist.example.test/abc';
    expect((await report(t.origin, { keys: [generateApiKey().secret, 'junk', apiKey], url })).status).toBe(200);
    const mail = await inbox.next(account.email);
    expect(mail.subject).toBe('An API key of yours was found in public and revoked');
    expect(mail.text).toContain(`key "test" (${apiKey.slice(0, 11)}...${apiKey.slice(-4)}) was reported found in public at ${url}`);
    expect(mail.text).toContain('https://dash.example.test/keys');
    expect(inbox.messages).toHaveLength(1);
  });
});

describe('leak report across instances', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster(2);
  });
  afterAll(async () => cluster?.close());

  it('a key reported to one instance is refused by the other within a second', async () => {
    const { apiKey } = await cluster.createAccount({ micros: 10_000_000 });
    const [first, second] = cluster.instances;
    // Both instances know the key (cached) before the report.
    await first!.client(apiKey).chat.completions.create(CHAT);
    await second!.client(apiKey).chat.completions.create(CHAT);

    expect((await report(first!.origin, { keys: [apiKey] })).status).toBe(200);
    const reportedAt = Date.now();
    let refused = false;
    while (!refused && Date.now() - reportedAt < 1_000) {
      refused = await second!
        .client(apiKey)
        .chat.completions.create(CHAT)
        .then(
          () => false,
          (err: unknown) => err instanceof OpenAI.AuthenticationError,
        );
    }
    expect(refused).toBe(true);
    await expectRevoked(first!.client(apiKey));
  });
});
