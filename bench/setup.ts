// What every benchmark of lmgate starts from: a config with limits far above what the
// benchmark reaches (checked, never hit), the demo echo model and two priced upstream models
// on the mock server (bench-slow streams slowly); and an account with a key, made by the CLI
// of the checkout measured.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startServer, type Server } from './processes.js';

export function writeConfig(dataDir: string, mockUrl: string): NodeJS.ProcessEnv {
  const configPath = join(dataDir, 'lmgate.yaml');
  writeFileSync(
    configPath,
    [
      'log: { level: warn }',
      'demo: { seed_account: false }',
      'tiers:',
      '  bench: { rpm: 100000000, tpm: 100000000000, concurrency: 100000, models: ["*"] }',
      'default_tier: bench',
      'models:',
      '  demo-echo: { backend: demo, kind: echo }',
      '  bench-upstream:',
      '    price: { input: 0.2, output: 0.6 }',
      `    deployments: [{ url: "${mockUrl}/v1", model: bench-model, max_concurrent: 100000 }]`,
      '  bench-slow:',
      '    price: { input: 0.2, output: 0.6 }',
      `    deployments: [{ url: "${mockUrl}/v1", model: bench-slow-model, max_concurrent: 100000 }]`,
    ].join('\n'),
  );
  return { LMGATE_CONFIG: configPath, LMGATE_DATA_DIR: dataDir, LMGATE_PORT: '0' };
}

/** An account with a million credits and its key's secret, by `checkout`'s CLI. */
export function createKey(env: NodeJS.ProcessEnv, checkout: string = ROOT): string {
  const cli = (...args: string[]): string => {
    const run = spawnSync(process.execPath, [join(checkout, 'bin/lmgate.js'), ...args, '--json'], { cwd: checkout, env: { ...process.env, ...env }, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`lmgate ${args.join(' ')} failed: ${run.stderr}`);
    return run.stdout;
  };
  const account = JSON.parse(cli('accounts', 'create', '--email', 'bench@lmgate.local', '--credits', '1000000')) as { id: string };
  return (JSON.parse(cli('keys', 'create', account.id, '--name', 'bench')) as { secret: string }).secret;
}

/**
 * The mock upstream and lmgate configured for it, each started into `servers` (to stop
 * them, even when a later step fails), with the headers of a key: what the load benches
 * that measure lmgate alone start from.
 */
export async function startMockAndLmgate(dataDir: string, servers: Server[]): Promise<{ lmgate: Server; headers: Record<string, string> }> {
  const mock = await startServer(['--import', 'tsx', 'bench/mock-upstream.ts']);
  servers.push(mock);
  const env = writeConfig(dataDir, mock.url);
  const headers = { authorization: `Bearer ${createKey(env)}`, 'content-type': 'application/json' };
  const lmgate = await startServer(['bin/lmgate.js', 'serve'], env);
  servers.push(lmgate);
  return { lmgate, headers };
}
