// `lmgate accounts set-tier` on SQLite: a tier that needs a subscription the account lacks
// is set with a warning on stderr; `--comp [--until DATE]` gives it without one (no
// warning), shows its end, is audited, and ends with a later plain set-tier.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { cliDataDir, runCli, type Run } from '../helpers/cli-run.js';

describe('accounts set-tier and complimentary plans in the CLI', () => {
  let dir: ReturnType<typeof cliDataDir>;
  let store: Store;
  const run = (...argv: string[]): Promise<Run> => runCli(dir.env, argv);

  beforeEach(async () => {
    dir = cliDataDir('lmgate-comp-cli-');
    store = openStore({ sqlitePath: join(dir.dataDir, 'lmgate.db') });
    expect((await run('accounts', 'create', '--email', 'ada@example.test')).code).toBe(0);
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  it('warns when the tier needs a subscription the account lacks, and not for a comp', async () => {
    const plain = await run('accounts', 'set-tier', 'ada@example.test', 'pro', '--json');
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({ tier: 'pro' });
    expect(plain.stderr).toMatch(/^pro needs a subscription ada@example\.test does not have: every API call is refused \(403 subscription_inactive\).*--comp/);

    const comp = await run('accounts', 'set-tier', 'ada@example.test', 'pro', '--comp', '--until', '2099-06-30', '--json');
    expect(comp.code).toBe(0);
    expect(comp.stderr).toBe('');
    expect(JSON.parse(comp.stdout)).toMatchObject({ tier: 'pro', comp_until: 'end of 2099-06-30 UTC' });
    expect(await store.findAccount('ada@example.test')).toMatchObject({ comp: { tier: 'pro', until: '2099-07-01T00:00:00.000Z' } });

    const audit = await store.listAudit({ limit: 10 });
    expect(audit.find((e) => e.action === 'account.set_tier' && e.after?.comp_until !== undefined)).toMatchObject({
      actor: { kind: 'cli' },
      before: { tier: 'pro' },
      after: { tier: 'pro', comp_until: '2099-07-01T00:00:00.000Z' },
    });

    // A free tier needs nothing; setting it ends the comp.
    const free = await run('accounts', 'set-tier', 'ada@example.test', 'free');
    expect(free.stderr).toBe('');
    expect(await store.findAccount('ada@example.test')).toMatchObject({ comp: null });
  });

  it('a comp without --until has no end; --until alone, a past date or a non-date is refused', async () => {
    const open = await run('accounts', 'set-tier', 'ada@example.test', 'pro', '--comp', '--json');
    expect(open.stderr).toBe('');
    expect(JSON.parse(open.stdout)).toMatchObject({ comp_until: 'never' });
    for (const [argv, message] of [
      [['--until', '2099-01-01'], /--until goes with --comp/],
      [['--comp', '--until', '2020-01-01'], /--until 2020-01-01 has passed/],
      [['--comp', '--until', 'tomorrow'], /--until takes a date/],
    ] as const) {
      const refused = await run('accounts', 'set-tier', 'ada@example.test', 'free', ...argv);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(message);
    }
    expect((await store.findAccount('ada@example.test'))?.tier).toBe('pro');
  });
});
