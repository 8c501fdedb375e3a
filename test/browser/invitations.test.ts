// Invitations in Chromium: an organisation's owner invites an address from the
// organisation page, the mail goes through a real SMTP server on loopback, and the invitee,
// who has no account, opens the mailed link, signs up on the invitation page, and lands in
// the organisation. A second look at the used link says it was used.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sessions } from '../../src/web-session/sessions.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp-inbox.js';
import { launchBrowser, openPage } from './browser.js';
import { bodyText, PASSWORD, uniqueEmail } from './dashboard.js';

let browser: Browser;
let t: TestApp;
let inbox: SmtpInbox;

beforeAll(async () => {
  browser = await launchBrowser();
  inbox = await startSmtpInbox();
  t = await startApp({
    overrides: {
      server: { port: 0, public_url: 'https://dash.example.test' },
      signup: { per_address_per_hour: 10_000 },
      smtp: { host: '127.0.0.1', port: inbox.port, from: 'lmgate <no-reply@example.test>' },
    },
  });
});
afterAll(async () => {
  await t.close();
  await inbox.close();
  await browser.close();
});

describe('invitations', () => {
  it('the owner invites by email; the invitee opens the mailed link, signs up, and is in the organisation', async () => {
    // The owner and the organisation are made as the dashboard makes them; the owner's
    // browser gets that session's cookie and starts on the organisation page.
    const { account: owner } = await t.createAccount({ email: uniqueEmail('owner') });
    const orgName = `Acme ${process.pid}`;
    const org = await t.app.commands.orgs.create(orgName, owner, t.config.default_tier);
    const sessions = new Sessions(t.store);
    const { token, session } = await sessions.start(owner.id);
    await sessions.actFor(session, org.id);
    const ownerTab = await openPage(browser, t.origin);
    await ownerTab.context.addCookies([{ name: 'lmgate_session', value: token, url: t.origin, httpOnly: true, sameSite: 'Lax' }]);
    await ownerTab.page.goto('/org');
    await ownerTab.page.getByRole('heading', { level: 2, name: 'Invitations' }).waitFor();

    const invitee = uniqueEmail('invitee');
    const form = ownerTab.page.getByRole('form', { name: 'Invite someone' });
    await form.getByLabel('Email').fill(invitee);
    await form.getByLabel('Role').selectOption('admin');
    await form.getByRole('button', { name: 'Invite' }).click();
    await ownerTab.page.getByText(`Invitation mailed to ${invitee}.`).waitFor();
    await ownerTab.page.getByTestId('org-invitations').getByText(invitee).waitFor();
    ownerTab.assertClean();

    const mail = await inbox.next(invitee);
    const link = new URL(/https:\/\/\S+\/invite\/\S+/.exec(mail.text)![0]);
    expect(link.origin).toBe('https://dash.example.test');

    // The configured address is the customer's way in; this test reaches the same app on loopback.
    const inviteeTab = await openPage(browser, t.origin);
    const { page } = inviteeTab;
    await page.goto(link.pathname);
    await page.getByRole('heading', { level: 1, name: `Join ${orgName}` }).waitFor();
    await inviteeTab.screenshot('invitation');
    expect(await page.getByLabel('Email').inputValue()).toBe(invitee);
    await page.getByLabel('Name (optional)').fill('Ada Invitee');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await page.waitForURL('**/org');
    await page.getByRole('heading', { level: 1, name: 'Organisation' }).waitFor();
    await page.getByRole('main').getByText(orgName).waitFor();
    expect(await bodyText(page)).toMatch(/you are an admin/i);
    const account = (await t.store.findAccount(invitee))!;
    expect((await t.store.findMembership(org.id, account.id))?.role).toBe('admin');

    // The link is spent.
    await page.goto(link.pathname);
    await page.getByText('This invitation has already been used.').waitFor();
    inviteeTab.assertClean();
  });
});
