// Anthropic's events for a streamed POST /messages: the backend's chat chunks, translated
// as they come, written as named events (`event: <type>`) on the path's event stream.
// Anthropic's stream has no `[DONE]`: message_stop, from `finish`, ends the message.
import type { ChatChunkBody } from '../chat-wire.js';
import type { AnthropicStreamEvent } from '../messages-wire.js';
import type { ChatToAnthropicStream } from '../stream-translation.js';
import type { Usage } from '../../billing/usage.js';
import type { ChunkSink } from '../../models/backend.js';
import type { EventStream } from '../../http/sse.js';

export class AnthropicEventSink implements ChunkSink {
  constructor(
    private readonly events: EventStream,
    private readonly translator: ChatToAnthropicStream,
  ) {}

  send(json: string): boolean {
    return this.write(this.translator.push(JSON.parse(json) as ChatChunkBody));
  }

  drained(): Promise<void> {
    return this.events.drained();
  }

  /** The closing events, with the counts billed. */
  finish(usage: Usage): void {
    this.write(this.translator.end(usage));
  }

  private write(events: readonly AnthropicStreamEvent[]): boolean {
    let ready = true;
    for (const event of events) ready = this.events.sendEvent(event.type, JSON.stringify(event));
    return ready;
  }
}
