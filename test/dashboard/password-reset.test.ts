// Passwords for accounts that had none (the CLI's, the demo's) and for those who forgot
// theirs: `accounts set-password` from stdin, `accounts reset-link`'s one-time link, and
// "Forgot password" through a real SMTP server on loopback, the link read from the mail.
import { Readable } from 'node:stream';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { hashAccountToken } from '../../src/auth/account-links.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp-inbox.js';
import { DashboardClient, expectUnifiedError } from './dashboard-client.js';

const OLD_PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'staple paper clip moon';
const INVALID_LINK = 'This link is not valid any more: it was used, it expired, or it was never issued. Ask for a new one.';

/** The operator's CLI against the app's own store, `stdin` piped in. */
async function cli(t: TestApp, argv: string[], stdin?: string): Promise<{ code: number; out: string[]; err: string[] }> {
  const configFile = join(t.dataDir, 'cli.yaml');
  writeFileSync(configFile, 'server:\n  public_url: https://dash.example.test\n');
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (line: string) => out.push(line), err: (line: string) => err.push(line), secretInput: stdin === undefined ? undefined : Readable.from([stdin]) };
  const code = await main(argv, io, { LMGATE_DATA_DIR: t.dataDir, LMGATE_CONFIG: configFile });
  return { code, out, err };
}

function tokenOf(link: string): string {
  const match = /\/reset-password#token=([A-Za-z0-9_-]+)$/.exec(link);
  if (!match) throw new Error(`not a reset link: ${link}`);
  return match[1]!;
}

async function signIn(t: TestApp, email: string, password: string): Promise<number> {
  return (await new DashboardClient(t).post('/signin', { email, password })).status;
}

describe('passwords set by the operator', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ overrides: { server: { port: 0, public_url: 'https://dash.example.test' } } });
  });
  afterAll(() => t.close());

  it('accounts set-password reads the password from stdin, and the account can sign in with it', async () => {
    expect((await cli(t, ['accounts', 'create', '--email', 'cli@example.test'])).code).toBe(0);
    expect(await signIn(t, 'cli@example.test', OLD_PASSWORD)).toBe(401);

    const set = await cli(t, ['accounts', 'set-password', 'cli@example.test', '--json'], `${OLD_PASSWORD}\nignored second line\n`);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.out[0]!)).toMatchObject({ email: 'cli@example.test', password: 'set' });
    expect(await signIn(t, 'cli@example.test', OLD_PASSWORD)).toBe(200);

    const short = await cli(t, ['accounts', 'set-password', 'cli@example.test'], 'short\n');
    expect(short.code).toBe(1);
    expect(short.err.join('\n')).toContain('a password needs 10 to 200 characters');
    expect(await signIn(t, 'cli@example.test', OLD_PASSWORD)).toBe(200);
  });

  it('a reset link sets a new password once, signs the account out everywhere, and is refused after', async () => {
    await cli(t, ['accounts', 'create', '--email', 'forgetful@example.test']);
    await cli(t, ['accounts', 'set-password', 'forgetful@example.test'], `${OLD_PASSWORD}\n`);
    const session = new DashboardClient(t);
    expect((await session.post('/signin', { email: 'forgetful@example.test', password: OLD_PASSWORD })).status).toBe(200);

    const issued = await cli(t, ['accounts', 'reset-link', 'forgetful@example.test', '--json']);
    expect(issued.code).toBe(0);
    const { link, expires_at: expiresAt } = JSON.parse(issued.out[0]!) as { link: string; expires_at: string };
    expect(link.startsWith('https://dash.example.test/reset-password#token=')).toBe(true);
    const minutesLeft = (Date.parse(expiresAt) - Date.now()) / 60_000;
    expect(minutesLeft).toBeGreaterThan(58);
    expect(minutesLeft).toBeLessThanOrEqual(60);
    const token = tokenOf(link);

    const tooShort = await new DashboardClient(t).post('/password-reset', { token, newPassword: 'short' });
    expect(tooShort.status).toBe(422);
    const reset = await new DashboardClient(t).post('/password-reset', { token, newPassword: NEW_PASSWORD });
    expect(reset.status).toBe(204);
    expect(await signIn(t, 'forgetful@example.test', OLD_PASSWORD)).toBe(401);
    expect(await signIn(t, 'forgetful@example.test', NEW_PASSWORD)).toBe(200);
    expect((await session.get('/session')).status).toBe(401);

    expectUnifiedError(await new DashboardClient(t).post('/password-reset', { token, newPassword: 'another long one' }), 410, INVALID_LINK);
    expect(await signIn(t, 'forgetful@example.test', NEW_PASSWORD)).toBe(200);
  });

  it('an expired, superseded or made-up token changes nothing', async () => {
    await cli(t, ['accounts', 'create', '--email', 'late@example.test']);
    await cli(t, ['accounts', 'set-password', 'late@example.test'], `${OLD_PASSWORD}\n`);
    const account = (await t.store.findAccount('late@example.test'))!;
    const expired = 'expired-token-for-the-test';
    const hourAgo = Date.now() - 60 * 60 * 1000;
    await t.store.createAccountToken({
      tokenHash: hashAccountToken(expired),
      accountId: account.id,
      purpose: 'password_reset',
      createdAt: new Date(hourAgo - 1000).toISOString(),
      expiresAt: new Date(hourAgo).toISOString(),
    });
    const first = tokenOf(JSON.parse((await cli(t, ['accounts', 'reset-link', 'late@example.test', '--json'])).out[0]!).link);
    const second = tokenOf(JSON.parse((await cli(t, ['accounts', 'reset-link', 'late@example.test', '--json'])).out[0]!).link);

    for (const token of [expired, 'made-up']) {
      expectUnifiedError(await new DashboardClient(t).post('/password-reset', { token, newPassword: NEW_PASSWORD }), 410, INVALID_LINK);
    }
    expect((await new DashboardClient(t).post('/password-reset', { token: second, newPassword: NEW_PASSWORD })).status).toBe(204);
    // Using one link retires the others sent before it.
    expectUnifiedError(await new DashboardClient(t).post('/password-reset', { token: first, newPassword: 'yet another password' }), 410);
    expect(await signIn(t, 'late@example.test', NEW_PASSWORD)).toBe(200);
  });

  it('without smtp there is no forgot-password mail to ask for', async () => {
    expect((await new DashboardClient(t).get('/config')).body.passwordResetByMail).toBe(false);
    expect((await new DashboardClient(t).post('/forgot-password', { email: 'cli@example.test' })).status).toBe(404);
  });
});

describe('forgot password, by mail', () => {
  let t: TestApp;
  let inbox: SmtpInbox;
  const SMTP_PASSWORD = 'smtp-secret-for-the-test';

  beforeAll(async () => {
    inbox = await startSmtpInbox({ user: 'lmgate', password: SMTP_PASSWORD });
    process.env.LMGATE_TEST_SMTP_PASSWORD = SMTP_PASSWORD;
    t = await startApp({
      overrides: {
        server: { port: 0, public_url: 'https://dash.example.test' },
        smtp: { host: '127.0.0.1', port: inbox.port, secure: false, user: 'lmgate', password_env: 'LMGATE_TEST_SMTP_PASSWORD', from: 'lmgate <no-reply@example.test>' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await inbox.close();
    delete process.env.LMGATE_TEST_SMTP_PASSWORD;
  });

  it('mails a one-time link through the SMTP server; the link sets the new password', async () => {
    expect((await new DashboardClient(t).get('/config')).body.passwordResetByMail).toBe(true);
    const signUp = await new DashboardClient(t).post('/signup', { email: 'Mailed@Example.test', password: OLD_PASSWORD });
    expect(signUp.status).toBe(201);

    // Whoever asks chooses the Host header: the link's address comes from the config.
    const asked = await new DashboardClient(t).post('/forgot-password', { email: 'mailed@example.test' }, { headers: { host: 'evil.example' } });
    expect(asked.status).toBe(204);
    const mail = await inbox.next('mailed@example.test');
    expect(mail.from).toBe('no-reply@example.test');
    expect(mail.subject).toBe('Reset your lmgate password');
    expect(inbox.logins).toContain(`lmgate:${SMTP_PASSWORD}`);
    const link = /https:\/\/\S+#token=\S+/.exec(mail.text)![0];
    expect(link.startsWith('https://dash.example.test/reset-password#token=')).toBe(true);

    expect((await new DashboardClient(t).post('/password-reset', { token: tokenOf(link), newPassword: NEW_PASSWORD })).status).toBe(204);
    expect(await signIn(t, 'mailed@example.test', NEW_PASSWORD)).toBe(200);
    expect(await signIn(t, 'mailed@example.test', OLD_PASSWORD)).toBe(401);
  });

  it('answers an unknown email exactly as a known one, and mails nothing', async () => {
    await new DashboardClient(t).post('/signup', { email: 'known@example.test', password: OLD_PASSWORD });
    const unknown = await new DashboardClient(t).post('/forgot-password', { email: 'nobody@example.test' });
    const known = await new DashboardClient(t).post('/forgot-password', { email: 'known@example.test' });
    expect([unknown.status, unknown.text]).toEqual([known.status, known.text]);
    expect(unknown.status).toBe(204);
    await inbox.next('known@example.test');
    expect(inbox.messages.some((mail) => mail.to.includes('nobody@example.test'))).toBe(false);
  });

  it('is rate limited per email address like sign-in: the sixth request in 15 minutes gets 429', async () => {
    for (let i = 0; i < 5; i++) expect((await new DashboardClient(t).post('/forgot-password', { email: 'flooded@example.test' })).status).toBe(204);
    const refused = await new DashboardClient(t).post('/forgot-password', { email: 'Flooded@example.test' });
    expectUnifiedError(refused, 429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
