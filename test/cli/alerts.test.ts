// lmgate alerts set | show on SQLite: an organisation's balance threshold and budget
// percentages, saved (audited), shown, cleared, and refused in one line when malformed.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { cliDataDir, runCli, type Run } from '../helpers/cli-run.js';

describe('alerts in the CLI', () => {
  let dir: ReturnType<typeof cliDataDir>;
  let store: Store;
  const run = (...argv: string[]): Promise<Run> => runCli(dir.env, argv);
  const json = async (...argv: string[]): Promise<Record<string, unknown>> => {
    const result = await run(...argv, '--json');
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };

  beforeEach(async () => {
    dir = cliDataDir('lmgate-alerts-cli-');
    store = openStore({ sqlitePath: join(dir.dataDir, 'lmgate.db') });
    expect((await run('accounts', 'create', '--email', 'ada@example.test')).code).toBe(0);
    expect((await run('orgs', 'create', 'Acme', '--owner', 'ada@example.test')).code).toBe(0);
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  it('sets, shows and clears the thresholds, each change audited', async () => {
    expect(await json('alerts', 'show', '--org', 'Acme')).toEqual({ account: 'Acme', balance_below: 'none', balance_below_micros: null, budget_thresholds: '50 %, 80 %, 100 % (default)' });
    expect(await json('alerts', 'set', '--org', 'Acme', '--balance-below', '2.5', '--budget-thresholds', '90, 25%,75')).toEqual({
      account: 'Acme',
      balance_below: '2.5 credits',
      balance_below_micros: 2_500_000,
      budget_thresholds: '25 %, 75 %, 90 %',
    });
    expect((await run('alerts', 'show', '--org', 'Acme')).stdout).toMatch(/budget_thresholds\s+25 %, 75 %, 90 %/);
    expect(await json('alerts', 'set', '--org', 'Acme', '--balance-below', 'none', '--budget-thresholds', 'default')).toMatchObject({ balance_below: 'none', budget_thresholds: '50 %, 80 %, 100 % (default)' });
    // A person's own account takes a balance alert too.
    expect(await json('alerts', 'set', '--org', 'ada@example.test', '--balance-below', '1')).toMatchObject({ account: 'ada@example.test', balance_below_micros: 1_000_000 });

    const audit = await store.listAudit({ limit: 10 });
    expect(audit.filter((entry) => entry.action === 'account.set_alerts')).toHaveLength(3);
  });

  it('refuses what it cannot take, in one line each', async () => {
    for (const [argv, message] of [
      [['alerts', 'set', '--org', 'Acme'], /needs --balance-below/],
      [['alerts', 'set', '--org', 'Acme', '--budget-thresholds', '50,150'], /--budget-thresholds: Each threshold is a whole percentage from 1 to 100/],
      [['alerts', 'set', '--org', 'Acme', '--balance-below', '-1'], /--balance-below/],
      [['alerts', 'show', '--org', 'Nobody'], /no organisation or account "Nobody"/],
      [['alerts', 'frob', '--org', 'Acme'], /expected set or show/],
    ] as const) {
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).not.toBe(0);
      expect(result.stderr).toMatch(message);
    }
  });
});
