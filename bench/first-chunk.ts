// Time to the first streamed chunk at concurrency 1, with microsecond resolution: wrk
// times whole responses only. One keep-alive connection; each request is written whole,
// the clock stops when the first `data:` line has arrived, and the answer is read to its
// end before the next request starts.
import { connect, type Socket } from 'node:net';

export interface FirstChunkFigures {
  p50Us: number;
  p99Us: number;
}

export async function measureFirstChunk(url: string, path: string, headers: Record<string, string>, body: string, requests: number): Promise<FirstChunkFigures> {
  const { hostname, port } = new URL(url);
  const head = [`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, `Content-Length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  const wire = `${head.join('\r\n')}\r\n\r\n${body}`;
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    s.once('error', reject);
  });
  socket.setNoDelay(true);
  const samples: number[] = [];
  try {
    for (let i = 0; i < requests; i++) samples.push(await oneRequest(socket, wire));
  } finally {
    socket.destroy();
  }
  samples.sort((a, b) => a - b);
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50Us: at(0.5), p99Us: at(0.99) };
}

/** Microseconds to the first `data:`; resolves once the chunked answer has ended. */
function oneRequest(socket: Socket, wire: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = '';
    let firstUs = -1;
    const start = process.hrtime.bigint();
    const onData = (data: Buffer): void => {
      seen += data.toString('latin1');
      if (firstUs < 0 && seen.includes('data:')) firstUs = Number(process.hrtime.bigint() - start) / 1000;
      if (seen.endsWith('0\r\n\r\n') && seen.includes('[DONE]')) {
        socket.off('data', onData);
        socket.off('error', reject);
        if (!seen.startsWith('HTTP/1.1 200')) reject(new Error(`answered ${seen.slice(0, 200)}`));
        else resolve(firstUs);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(wire);
  });
}
