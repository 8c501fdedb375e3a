// `serve` logs what the config says but probably does not mean, once, one line each: a
// model without a price, a tiers: that drops a default tier (config/warnings.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../helpers/server-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-config-warnings-'));
const env = { LMGATE_CONFIG: join(dataDir, 'lmgate.yaml'), LMGATE_DATA_DIR: dataDir };
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

writeFileSync(
  join(dataDir, 'lmgate.yaml'),
  [
    'demo: { seed_account: false }',
    'tiers:',
    '  free: { rpm: 60, tpm: 100000, concurrency: 2, models: ["*"] }',
    'models:',
    '  local-echo: { backend: demo, kind: echo }',
    '  gratis: { backend: demo, kind: echo, price: 0 }',
  ].join('\n'),
);

describe('config warnings at start', () => {
  it('are logged once each', async () => {
    const server = await startServer(env, /OpenAI base URL: \S+\n/);
    // The log is written asynchronously, so it may follow the banner: wait for pino's "listening".
    await expect.poll(() => server.output()).toContain('Server listening at');
    const output = server.output();
    const count = (text: string): number => output.split(text).length - 1;
    expect(count('models.local-echo has no price, so calls to it are free')).toBe(1);
    expect(count('tiers in the config replace every default tier: pro is no longer a tier')).toBe(1);
    expect(output).not.toContain('models.gratis');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
