// lmgate as its own process (`serve` from the sources), for what only a process shows:
// kill -9, SIGTERM, exit codes. Every process started here is killed after the suite.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

export interface ServerProcess {
  child: ChildProcess;
  origin: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process ended. */
  exited: Promise<number | string>;
}

/**
 * Starts `lmgate serve [args]` with `env` on top of this process's environment (LMGATE_PORT=0 by
 * default) and resolves once it listens and its output matches `ready`.
 */
export function startServer(env: Record<string, string>, ready: RegExp = /OpenAI base URL: \S+\n/, args: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, LMGATE_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    const onData = (data: Buffer): void => {
      output += data.toString();
      const match = /listening on (https?:\/\/[\d.]+:\d+)/.exec(output);
      if (match && ready.test(output)) resolve({ child, origin: match[1]!, output: () => output, exited });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`server exited early (${code}): ${output}`)));
  });
}
