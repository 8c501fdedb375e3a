// Server-sent events in Anthropic's framing for POST /messages: `event: <type>` and
// `data: <json>` per event, no `[DONE]` (message_stop ends the message).
import type { ServerResponse } from 'node:http';
import type { AnthropicStreamEvent } from '../anthropic/messages-wire.js';

const STREAM_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** The client's end of a stream. The status line waits for the first event, so a backend that cannot start still gets a plain error status. */
export class AnthropicEventStream {
  private started = false;

  constructor(
    private readonly res: ServerResponse,
    /** The headers to send with the status line, read when the first event goes out. */
    private readonly headersNow: () => Record<string, string>,
  ) {}

  get hasStarted(): boolean {
    return this.started;
  }

  /** Writes the events; false when the socket buffer is full. */
  send(events: readonly AnthropicStreamEvent[]): boolean {
    if (events.length === 0) return !this.res.writableNeedDrain;
    this.start();
    if (this.isOpen) this.res.write(framed(events));
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

  end(events: readonly AnthropicStreamEvent[]): void {
    this.start();
    if (this.isOpen) this.res.end(framed(events));
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(200, { ...this.headersNow(), ...STREAM_HEADERS });
  }

  private get isOpen(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }
}

function framed(events: readonly AnthropicStreamEvent[]): string {
  let out = '';
  for (const event of events) out += `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  return out;
}
