// `lmgate webhooks add | list | remove | rotate` on a SQLite store: the secret printed
// once, rotation keeping the old secret beside the new one, refusals in the flags' words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/kysely-store.js';
import { cliDataDir, runCli } from '../helpers/cli-run.js';

describe('lmgate webhooks', () => {
  const dir = cliDataDir('lmgate-cli-webhooks-');
  let accountId: string;

  beforeAll(async () => {
    const created = await runCli(dir.env, ['accounts', 'create', '--email', 'hooks@example.test', '--json']);
    expect(created.code, created.stderr).toBe(0);
    accountId = JSON.parse(created.stdout).id;
  });
  afterAll(() => dir.remove());

  it('adds an endpoint and prints its secret once; list shows it without the secret', async () => {
    const added = await runCli(dir.env, ['webhooks', 'add', '--org', 'hooks@example.test', 'https://example.test/hooks', '--events', 'balance.low,budget.threshold']);
    expect(added.code, added.stderr).toBe(0);
    const secret = added.out.at(-1)!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(added.stdout).toContain('shown once');
    const listed = await runCli(dir.env, ['webhooks', 'list', '--org', accountId, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const [endpoint] = JSON.parse(listed.stdout);
    expect(endpoint).toMatchObject({ id: expect.stringMatching(/^whep_/), account_id: accountId, url: 'https://example.test/hooks', events: 'balance.low,budget.threshold' });
    expect(listed.stdout).not.toContain(secret);
  });

  it('rotates: a new secret printed once, the old one signing beside it for 24 hours', async () => {
    const added = await runCli(dir.env, ['webhooks', 'add', '--org', accountId, 'https://example.test/rotate', '--events', 'key.revoked', '--json']);
    const { id, secret: oldSecret } = JSON.parse(added.stdout);
    const rotated = await runCli(dir.env, ['webhooks', 'rotate', id, '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const after = JSON.parse(rotated.stdout);
    expect(after.secret).not.toBe(oldSecret);
    expect(Date.parse(after.previous_secret_until) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    const store = openStore({ sqlitePath: `${dir.dataDir}/lmgate.db` });
    try {
      expect(await store.findWebhookEndpoint(id)).toMatchObject({ secret: after.secret, previousSecret: oldSecret });
    } finally {
      await store.close();
    }
  });

  it('removes an endpoint; removing it again, or an unknown one, fails', async () => {
    const { id } = JSON.parse((await runCli(dir.env, ['webhooks', 'add', '--org', accountId, 'https://example.test/gone', '--events', 'key.revoked', '--json'])).stdout);
    expect((await runCli(dir.env, ['webhooks', 'remove', id])).code).toBe(0);
    expect(JSON.parse((await runCli(dir.env, ['webhooks', 'list', '--org', accountId, '--json'])).stdout).map((e: { id: string }) => e.id)).not.toContain(id);
    const again = await runCli(dir.env, ['webhooks', 'remove', id]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(id);
  });

  it('refuses an unknown event type, a URL that is not http(s), a missing --org or --events', async () => {
    const badType = await runCli(dir.env, ['webhooks', 'add', '--org', accountId, 'https://example.test/x', '--events', 'key.created']);
    expect(badType.code).toBe(1);
    expect(badType.stderr).toContain('key.created');
    const badUrl = await runCli(dir.env, ['webhooks', 'add', '--org', accountId, 'ftp://example.test/x', '--events', 'key.revoked']);
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toContain('https://');
    expect((await runCli(dir.env, ['webhooks', 'add', 'https://example.test/x', '--events', 'key.revoked'])).stderr).toContain('--org');
    expect((await runCli(dir.env, ['webhooks', 'add', '--org', accountId, 'https://example.test/x'])).stderr).toContain('--events');
    expect((await runCli(dir.env, ['webhooks', 'list', '--org', 'nobody@example.test'])).stderr).toContain('nobody@example.test');
  });

  it('has help for each subcommand', async () => {
    const help = await runCli(dir.env, ['help', 'webhooks']);
    expect(help.code).toBe(0);
    for (const sub of ['add', 'list', 'remove', 'rotate']) expect(help.stdout).toContain(`webhooks ${sub}`);
  });
});
