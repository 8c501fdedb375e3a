// Server-sent events for streamed answers, written straight to the socket: OpenAI's chat
// framing (`data: <json>\n\n`, ending with `data: [DONE]\n\n`) by default, or named
// events (`event: <name>\n`) and another ending where an API says so.
import type { ServerResponse } from 'node:http';
import type { ChunkSink } from '../models/backend.js';

/** How a stream ends when nothing went wrong. */
export interface EventFraming {
  /** The last frame: OpenAI's chat ends with `data: [DONE]`; the Responses API with nothing more. */
  done: string;
}

export const OPENAI_CHAT_FRAMING: EventFraming = { done: 'data: [DONE]\n\n' };
const STREAM_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  // Tells nginx-style proxies not to buffer the stream.
  'x-accel-buffering': 'no',
};

/**
 * The client's end of a stream. The status line waits for the first event (so a backend
 * that cannot start still answers with a plain error status) and goes out in the same
 * write. Events sent in one turn of the event loop (a fast backend, a batch from an
 * upstream) are joined and written once at the end of it: one pass through node's HTTP
 * framing and one syscall instead of one per event. The join is flushed as a microtask,
 * before node uncorks the socket on its next tick, so a stream whose end arrived in the
 * same read (the backend's promise settles in the same microtask run) goes out whole in
 * one syscall with its `[DONE]`.
 */
export class EventStream implements ChunkSink {
  private pending = '';
  private headers: Record<string, string> | undefined;
  private readonly flush = (): void => {
    const out = this.pending;
    this.pending = '';
    if (out.length > 0 && this.isOpen) this.res.write(out);
  };

  constructor(
    private readonly res: ServerResponse,
    /** The headers to send with the status line, read when the first event goes out. */
    private readonly headersNow: () => Record<string, string>,
    private readonly framing: EventFraming = OPENAI_CHAT_FRAMING,
  ) {}

  /** The status line has gone out (or is queued to): errors must now be events. */
  get hasStarted(): boolean {
    return this.headers !== undefined;
  }

  send(json: string): boolean {
    this.start();
    if (this.pending.length === 0) queueMicrotask(this.flush);
    this.pending += `data: ${json}\n\n`;
    return !this.res.writableNeedDrain;
  }

  /** Writes one named SSE event (`event: <name>`), as the Responses and Messages APIs send them. */
  sendEvent(name: string, json: string): boolean {
    this.start();
    if (this.pending.length === 0) queueMicrotask(this.flush);
    this.pending += `event: ${name}\ndata: ${json}\n\n`;
    return !this.res.writableNeedDrain;
  }

  drained(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (!this.isOpen || !this.res.writableNeedDrain) return resolve();
      const done = (): void => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  /** Ends the stream with the framing's last frame, or with `lastFrame` (an error event) instead. */
  end(lastFrame?: string): void {
    this.start();
    const out = this.pending + (lastFrame ?? this.framing.done);
    this.pending = '';
    if (this.isOpen) this.res.end(out);
  }

  private start(): void {
    if (this.headers !== undefined) return;
    const headers = this.headersNow();
    this.headers = headers;
    // A flat [name, value, ...] list, which node takes as it is: an object literal built
    // by spreading the reply's headers missed V8's inline caches on every request.
    const head: string[] = [];
    for (const name in headers) {
      if (!(name in STREAM_HEADERS)) head.push(name, headers[name]!);
    }
    for (const name in STREAM_HEADERS) head.push(name, STREAM_HEADERS[name]!);
    this.res.writeHead(200, head);
  }

  private get isOpen(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }
}
