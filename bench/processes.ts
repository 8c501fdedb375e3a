// The benchmark's servers: each in its own process on the servers' core, the load
// generator (and this script) on another, when taskset exists and there are 2+ cores.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const SERVER_CORE = '0';
export const LOAD_CORE = '1';
export const ROOT = new URL('..', import.meta.url).pathname;

export const hasTaskset = spawnSync('taskset', ['-p', String(process.pid)]).status === 0;
if (hasTaskset) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)]);

export interface Server {
  child: ChildProcess;
  url: string;
}

/** Starts `node <args>` and resolves with the first http://127.0.0.1:port it prints. */
export function startServer(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const command = hasTaskset ? 'taskset' : process.execPath;
  const argv = hasTaskset ? ['-c', SERVER_CORE, process.execPath, ...args] : args;
  const child = spawn(command, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (data: Buffer) => {
      seen += data.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (match) resolve({ child, url: match[1]! });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${seen}`)));
  });
}

/** Fails a benchmark whose server has exited under it, saying how it ended. */
export function assertRunning(server: Server, name: string): void {
  const { exitCode, signalCode } = server.child;
  if (exitCode !== null || signalCode !== null) throw new Error(`${name} exited (${signalCode ?? `code ${exitCode}`}) during the run`);
}

// Linux's clock ticks for /proc times (sysconf(_SC_CLK_TCK)); 100 on every mainstream build.
const TICKS_PER_SEC = 100;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state, field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SEC; // utime, stime
}

/** A process's resident memory now (VmRSS) or at its peak so far (VmHWM), in bytes, from /proc/<pid>/status. */
export function memoryBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} for process ${pid}`);
  return Number(match[1]) * 1024;
}
