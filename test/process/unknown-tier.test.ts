// An account whose tier the config no longer has: served as the default tier, and the
// operator told at start how many there are.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/kysely-store.js';
import { startServer } from '../helpers/server-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-unknown-tier-'));
const env = { LMGATE_CONFIG: join(dataDir, 'lmgate.yaml'), LMGATE_DATA_DIR: dataDir };

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

writeFileSync(join(dataDir, 'lmgate.yaml'), ['demo: { seed_account: false }', 'tiers:', '  free: { rpm: 60, tpm: 100000, concurrency: 2, models: ["*"] }'].join('\n'));

describe('accounts on a tier the config does not have', () => {
  it('are counted in a warning at start', async () => {
    const store = openStore({ sqlitePath: join(dataDir, 'lmgate.db') });
    await store.migrate();
    await store.createAccount({ email: 'gold@example.com', tier: 'gold' });
    await store.createAccount({ email: 'platinum@example.com', tier: 'platinum' });
    await store.createAccount({ email: 'free@example.com', tier: 'free' });
    await store.close();

    const server = await startServer(env, /OpenAI base URL: \S+\n/);
    // The log is written asynchronously: it may follow the banner.
    await expect.poll(() => server.output()).toContain('2 accounts are on a tier the config does not have, and served as the default tier (free)');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
