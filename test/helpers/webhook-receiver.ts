// A customer's webhook endpoint for tests: a real HTTP server on loopback that keeps every
// request it receives, answers as the test tells it (a status, or hanging without an
// answer), and can go down and come back on the same port (connections refused meanwhile).
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** The path and query it was posted to. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A status to answer, or 'hang' to keep the request open until the receiver closes. */
export type Answer = number | 'hang';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** What the next requests get; default 200. */
  answer(next: (request: ReceivedWebhook) => Answer): void;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<void>;
  /** Stops listening (connections are refused) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hooks'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hanging = new Set<ServerResponse>();
  const waiters: { count: number; resolve: () => void }[] = [];
  let decide: (request: ReceivedWebhook) => Answer = () => 200;
  let server: Server | undefined;
  let port = 0;

  const listen = async (): Promise<void> => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        received.push(request);
        for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
        const answer = decide(request);
        if (answer === 'hang') {
          hanging.add(res);
          return;
        }
        res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  };
  const stop = async (): Promise<void> => {
    for (const res of hanging) res.destroy();
    hanging.clear();
    const closing = server;
    server = undefined;
    if (!closing) return;
    closing.closeAllConnections();
    await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  await listen();
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    answer: (next) => {
      decide = next;
    },
    waitFor: (count) =>
      received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    down: stop,
    up: listen,
    close: stop,
  };
}
