// The CLI's own words: help for every command and subcommand, --version, options it does
// not know, and options given twice.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { cliDataDir, runCli } from '../helpers/cli-run.js';

const data = cliDataDir('lmgate-cli-help-');
afterAll(() => data.remove());

const SUBCOMMANDS: Record<string, string[]> = {
  accounts: ['create', 'list', 'show', 'suspend', 'reactivate', 'set-tier', 'set-price-multiplier', 'set-role', 'set-password', 'reset-link'],
  keys: ['create', 'update', 'list', 'revoke'],
  credits: ['grant', 'adjust', 'ledger'],
  codes: ['create', 'list', 'disable'],
  'admin-keys': ['create', 'list', 'revoke'],
  payments: ['list', 'replay'],
  store: ['copy'],
};
const SINGLE = ['serve', 'migrate', 'audit', 'upstreams'];

describe('lmgate help', () => {
  it('prints each subcommand’s own usage for COMMAND SUBCOMMAND --help and for help COMMAND SUBCOMMAND', async () => {
    for (const [command, subcommands] of Object.entries(SUBCOMMANDS)) {
      for (const subcommand of subcommands) {
        const flag = await runCli(data.env, [command, subcommand, '--help']);
        expect(flag.code).toBe(0);
        expect(flag.out[0]).toMatch(new RegExp(`^usage: lmgate ${command} ${subcommand}\\b`));
        const word = await runCli(data.env, ['help', command, subcommand]);
        expect(word.stdout).toBe(flag.stdout);
      }
      // The command alone lists its subcommands.
      const listed = await runCli(data.env, [command, '--help']);
      expect(listed.code).toBe(0);
      for (const subcommand of subcommands) expect(listed.stdout).toContain(`lmgate ${command} ${subcommand}`);
    }
    for (const command of SINGLE) {
      const run = await runCli(data.env, ['help', command]);
      expect(run.code).toBe(0);
      expect(run.out[0]).toMatch(new RegExp(`^usage: lmgate ${command}\\b`));
    }
  });

  it('names serve’s options and says where every command reads its configuration', async () => {
    const run = await runCli(data.env, ['serve', '--help']);
    expect(run.stdout).toContain('--port N');
    expect(run.stdout).toContain('--host H');
    expect(run.stdout).toContain('LMGATE_PORT, then PORT');
    for (const source of ['lmgate.yaml', 'LMGATE_CONFIG', 'DATABASE_URL']) expect(run.stdout).toContain(source);
    const overview = await runCli(data.env, ['help']);
    expect(overview.code).toBe(0);
    for (const source of ['lmgate.yaml', 'LMGATE_CONFIG', 'DATABASE_URL']) expect(overview.stdout).toContain(source);
  });

  it('answers help for a command it does not have with exit 2', async () => {
    const run = await runCli(data.env, ['help', 'teams']);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe('lmgate: no command "teams"');
  });

  it('prints the version from package.json', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const run = await runCli(data.env, ['--version']);
    expect(run).toMatchObject({ code: 0, out: [`lmgate ${version}`] });
  });
});

describe('options', () => {
  it('refuses an unknown option in lmgate’s words, not parseArgs’', async () => {
    const run = await runCli(data.env, ['keys', 'create', 'a@example.com', '--colour', 'red']);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe('lmgate: unknown option --colour');
    expect(run.stderr).not.toContain('positional');
    const missing = await runCli(data.env, ['keys', 'create', 'a@example.com', '--name']);
    expect(missing.stderr.split('\n')[0]).toBe('lmgate: --name needs a value');
  });

  it('adds up a repeated --scope, and refuses another option given twice', async () => {
    const both = await runCli(data.env, ['admin-keys', 'create', '--scope', 'read', '--scope', 'accounts', '--json']);
    expect(both.code).toBe(0);
    expect(JSON.parse(both.stdout)).toMatchObject({ scopes: 'read,accounts' });
    const twice = await runCli(data.env, ['admin-keys', 'create', '--scope', 'read', '--name', 'a', '--name', 'b']);
    expect(twice).toMatchObject({ code: 1, err: ['lmgate: --name was given 2 times ("a", "b"); give it once'] });
  });

  it('refuses serve’s options on other commands and a port that is not one', async () => {
    expect((await runCli(data.env, ['accounts', 'list', '--port', '9000'])).err).toEqual(['lmgate: --port goes with serve']);
    expect((await runCli(data.env, ['serve', '--port', '70000'])).err).toEqual(['lmgate: --port: "70000" is not a port number (0 to 65535)']);
  });

  it('takes the port from LMGATE_PORT before PORT, and from PORT over the file', () => {
    expect(loadConfig({ env: { ...data.env, PORT: '9001', LMGATE_PORT: '9002' } }).server.port).toBe(9002);
    expect(loadConfig({ env: { ...data.env, PORT: '9001' } }).server.port).toBe(9001);
    expect(() => loadConfig({ env: { ...data.env, PORT: 'http' } })).toThrow('PORT: "http" is not a valid int');
  });
});
