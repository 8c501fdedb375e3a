// A TCP proxy on loopback that a test can cut or stall, to take a real server (Redis) away
// from the code under test and give it back, the way an outage or a network partition would.
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  url(scheme: string): string;
  /** Closes every connection and refuses new ones, as a stopped server would. */
  cut(): void;
  /** Accepts connections but forwards nothing, as a hung server or a lost route would. */
  stall(): void;
  restore(): void;
  /** Forwards to another server from now on, dropping every connection: a failover. */
  switchTo(port: number): void;
  close(): Promise<void>;
}

export async function startTcpProxy(firstPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let targetPort = firstPort;
  let mode: 'open' | 'cut' | 'stall' = 'open';
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (mode === 'cut') return client.destroy();
    if (mode === 'stall') return; // held open, never answered
    const upstream = createConnection(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const dropAll = (): void => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: (scheme) => `${scheme}://127.0.0.1:${port}`,
    cut() {
      mode = 'cut';
      dropAll();
    },
    stall() {
      mode = 'stall';
      // Connections already open stop forwarding too.
      for (const socket of sockets) socket.pause();
      for (const socket of sockets) socket.unpipe();
    },
    restore() {
      mode = 'open';
      // Stalled connections are dropped; clients reconnect through the open proxy.
      dropAll();
    },
    switchTo(port) {
      targetPort = port;
      dropAll();
    },
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
