// A database or Redis server lmgate cannot use, said in one line: which server (its URL
// without the password) and what to do. The CLI and `serve` print it without a stack.

export class ConnectionError extends Error {
  override name = 'ConnectionError';
}

/** The URL as it may be printed: user, host, port and database, never a password. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    url.password = '';
    url.searchParams.delete('password');
    return url.href;
  } catch {
    return '(the configured URL, which does not parse)';
  }
}

/** What a failed connect looks like, in words; undefined when the error is not about reaching the server. */
export function describeNetworkFailure(err: unknown): string | undefined {
  // Node 20 answers a name with several addresses (localhost) with an AggregateError.
  const first = err instanceof AggregateError ? (err.errors[0] as unknown) : err;
  const code = (first as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'nothing is listening there (is the server running, on that host and port?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'no such host (check the host name)';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host does not answer (check the host, and any firewall between)';
    case 'ECONNRESET':
      return 'the server closed the connection (check the port and whether it expects TLS)';
    default:
      return undefined;
  }
}

/** The ConnectionError behind `err`, however deep in its causes (a failed migration wraps it). */
export function findConnectionError(err: unknown): ConnectionError | undefined {
  for (let current = err, depth = 0; current instanceof Error && depth < 10; current = current.cause, depth++) {
    if (current instanceof ConnectionError) return current;
  }
  return undefined;
}
