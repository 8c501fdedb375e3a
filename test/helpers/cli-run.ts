// The operator CLI driven through main(argv, io, env), its output collected, against a
// SQLite file in a temporary data directory of its own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';

export interface Run {
  code: number;
  out: string[];
  err: string[];
  stdout: string;
  stderr: string;
}

export async function runCli(env: NodeJS.ProcessEnv, argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, env);
  return { code, out, err, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A temporary data directory and the environment pointing the CLI at it. */
export function cliDataDir(prefix: string): { dataDir: string; env: NodeJS.ProcessEnv; remove(): void } {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  // An explicit, empty config file keeps an lmgate.yaml in the working directory out of it.
  const configFile = join(dataDir, 'lmgate.yaml');
  writeFileSync(configFile, '');
  return { dataDir, env: { LMGATE_DATA_DIR: dataDir, LMGATE_CONFIG: configFile }, remove: () => rmSync(dataDir, { recursive: true, force: true }) };
}
