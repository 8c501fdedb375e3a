// An HTTP proxy on loopback that records what a server answered: the request body and the
// whole response text of each exchange, streamed through as it arrives. It stands between
// lmgate and a real model server, so a test can compare what lmgate billed with what the
// server itself reported.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedExchange {
  path: string;
  requestBody: string;
  status: number;
  responseText: string;
}

export interface RecordingProxy {
  /** The proxy's base URL: the target's path under the proxy's origin. */
  url: string;
  readonly exchanges: RecordedExchange[];
  close(): Promise<void>;
}

/** Proxies to `targetOrigin` (`http://127.0.0.1:PORT`); `basePath` is the path the returned URL ends in (`/v1`). */
export async function startRecordingProxy(targetOrigin: string, basePath = '/v1'): Promise<RecordingProxy> {
  const exchanges: RecordedExchange[] = [];
  const server = createServer((req, res) => void forward(req, res));

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const requestBody = Buffer.concat(parts).toString('utf8');
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    try {
      const answer = await fetch(`${targetOrigin}${req.url ?? '/'}`, {
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: req.method === 'GET' ? undefined : requestBody,
        signal: abort.signal,
      });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      const exchange: RecordedExchange = { path: req.url ?? '/', requestBody, status: answer.status, responseText: '' };
      exchanges.push(exchange);
      const decoder = new TextDecoder();
      for await (const chunk of answer.body ?? []) {
        exchange.responseText += decoder.decode(chunk as Uint8Array, { stream: true });
        res.write(chunk);
      }
      res.end();
    } catch {
      res.destroy();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
