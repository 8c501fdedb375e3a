// signup.verify_email: a sign-up becomes an account only when its owner opens the link
// mailed to the address, through a real SMTP server on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp-inbox.js';
import { DashboardClient, expectUnifiedError } from './dashboard-client.js';

const PASSWORD = 'correct horse battery';

describe('sign-up with email confirmation', () => {
  let t: TestApp;
  let inbox: SmtpInbox;

  beforeAll(async () => {
    inbox = await startSmtpInbox();
    t = await startApp({
      overrides: {
        server: { port: 0, public_url: 'https://dash.example.test' },
        signup: { per_address_per_hour: 10_000, credits: 2, verify_email: true },
        smtp: { host: '127.0.0.1', port: inbox.port, from: 'lmgate <no-reply@example.test>' },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await inbox.close();
  });

  it('creates the account, with its sign-up credits, only when the mailed link is opened, once', async () => {
    expect((await new DashboardClient(t).get('/config')).body.verifyEmail).toBe(true);
    const asked = await new DashboardClient(t).post('/signup', { email: 'careful@example.test', password: PASSWORD });
    expect(asked.status).toBe(202);
    expect(asked.body).toEqual({ emailToConfirm: 'careful@example.test' });
    expect(asked.headers.getSetCookie()).toEqual([]);
    expect(await t.store.findAccount('careful@example.test')).toBeUndefined();
    expect((await new DashboardClient(t).post('/signin', { email: 'careful@example.test', password: PASSWORD })).status).toBe(401);

    const mail = await inbox.next('careful@example.test');
    expect(mail.subject).toBe('Confirm your lmgate account');
    const link = new URL(/https:\/\/\S+#token=\S+/.exec(mail.text)![0]);
    expect(`${link.origin}${link.pathname}`).toBe('https://dash.example.test/confirm-email');
    const token = link.hash.slice('#token='.length);

    const browser = new DashboardClient(t);
    const confirmed = await browser.post('/confirm-email', { token });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.account.email).toBe('careful@example.test');
    expect((await browser.get('/session')).status).toBe(200);
    const account = (await t.store.findAccount('careful@example.test'))!;
    expect(await t.store.balanceOf(account.id)).toBe(2_000_000);
    expect((await new DashboardClient(t).post('/signin', { email: 'careful@example.test', password: PASSWORD })).status).toBe(200);

    expectUnifiedError(await new DashboardClient(t).post('/confirm-email', { token }), 410);
    expectUnifiedError(await new DashboardClient(t).post('/confirm-email', { token: 'made-up' }), 410);
    expect(await t.store.balanceOf(account.id)).toBe(2_000_000);
  });

  it('an address confirmed by an earlier link is not given a second account', async () => {
    await new DashboardClient(t).post('/signup', { email: 'twice@example.test', password: PASSWORD });
    await new DashboardClient(t).post('/signup', { email: 'twice@example.test', password: PASSWORD });
    const tokens = [await inbox.next('twice@example.test'), await inbox.next('twice@example.test')].map((mail) => /#token=(\S+)/.exec(mail.text)![1]!);
    expect((await new DashboardClient(t).post('/confirm-email', { token: tokens[0] })).status).toBe(200);
    expectUnifiedError(await new DashboardClient(t).post('/confirm-email', { token: tokens[1] }), 409);
  });

  it('answers a sign-up for a taken address exactly as for a new one, and mails its owner instead of a link', async () => {
    await t.createAccount({ email: 'owner@example.test' });
    const fresh = await new DashboardClient(t).post('/signup', { email: 'newcomer@example.test', password: PASSWORD });
    const taken = await new DashboardClient(t).post('/signup', { email: 'owner@example.test', password: PASSWORD });
    expect([taken.status, taken.body]).toEqual([fresh.status, { emailToConfirm: 'owner@example.test' }]);
    expect(taken.headers.getSetCookie()).toEqual([]);
    expect((await inbox.next('newcomer@example.test')).subject).toBe('Confirm your lmgate account');
    const told = await inbox.next('owner@example.test');
    expect(told.subject).toBe('Someone tried to sign up with your lmgate address');
    expect(told.text).toContain('https://dash.example.test/forgot-password');
    expect(told.text).not.toContain('#token=');
    expect((await t.store.listAccounts()).filter((account) => account.email === 'owner@example.test')).toHaveLength(1);
  });

  it('is refused at start without smtp, naming the field', () => {
    expect(() => loadConfig({ env: {}, cwd: t.dataDir, overrides: { signup: { verify_email: true } } })).toThrow(/signup\.verify_email: needs smtp/);
  });
});
