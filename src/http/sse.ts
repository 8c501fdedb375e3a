// Server-sent events for streamed completions: OpenAI's framing (`data: <json>\n\n`,
// ending with `data: [DONE]\n\n`), written straight to the socket.
import type { ServerResponse } from 'node:http';
import type { ChunkSink } from '../models/backend.js';

const DONE = 'data: [DONE]\n\n';

export function startEventStream(res: ServerResponse, headers: Record<string, string>): void {
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    // Tells nginx-style proxies not to buffer the stream.
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
}

/** A sink writing to `res`; `beforeFirst` runs before the first event (to send headers). */
export function eventSink(res: ServerResponse, beforeFirst: () => void): ChunkSink {
  // Chunks produced in one synchronous burst (a fast backend, a batch from upstream) go
  // out in one write instead of one syscall each; a paced stream still flushes per tick.
  let corked = false;
  const uncork = (): void => {
    corked = false;
    res.uncork();
  };
  return {
    send: (json) => {
      beforeFirst();
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(uncork);
      }
      return res.write(`data: ${json}\n\n`);
    },
    drained: () =>
      new Promise<void>((resolve) => {
        if (res.destroyed || res.writableEnded) return resolve();
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      }),
  };
}

export function endEventStream(res: ServerResponse, errorJson?: string): void {
  if (res.destroyed || res.writableEnded) return;
  res.end(errorJson === undefined ? DONE : `data: ${errorJson}\n\n`);
}
