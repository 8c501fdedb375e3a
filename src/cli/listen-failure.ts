// A port that cannot be had is the first thing a new operator meets: one line naming the
// address and how to choose another, instead of Node's stack trace.
import { CliError } from './context.js';

const CHOOSE_PORT = 'choose another port with --port N, PORT or LMGATE_PORT, or server.port in lmgate.yaml';
const CHOOSE_HOST = 'choose another address with --host H, LMGATE_HOST, or server.host in lmgate.yaml';

/** The operator's error for a failed listen, or the error itself when it is not about the address. */
export function listenFailure(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new CliError(`cannot listen on ${address}: the port is in use (is lmgate already running?); ${CHOOSE_PORT}`, { cause: err });
    case 'EACCES':
      return new CliError(`cannot listen on ${address}: permission denied (ports below 1024 need privileges); ${CHOOSE_PORT}`, { cause: err });
    case 'EADDRNOTAVAIL':
      return new CliError(`cannot listen on ${address}: this machine has no such address; ${CHOOSE_HOST}`, { cause: err });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new CliError(`cannot listen on ${address}: no such host; ${CHOOSE_HOST}`, { cause: err });
    default:
      return err;
  }
}

/**
 * Tries the address before anything else starts, so a taken port fails in well under a
 * second, before a store file is created or migrated. The listen that follows can still
 * lose a race, and says so the same way.
 */
export async function assertCanListen(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err) => reject(listenFailure(err, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
