// One POST /messages call as its backend sees it: the translated chat request, and the
// client's end, which says when the client goes or a shutdown's drain stops the answer.
import type { FastifyReply } from 'fastify';
import type { Usage } from '../../billing/usage.js';
import type { BackendCall, ClientLink } from '../../models/backend.js';
import type { Stoppable } from '../in-flight.js';

export class MessagesCall implements BackendCall, ClientLink, Stoppable {
  private readonly listeners: (() => void)[] = [];
  private isListening = false;
  private isGone = false;
  /** Ended by the shutdown's drain, not by the client. */
  stopped = false;

  constructor(
    readonly request: BackendCall['request'],
    readonly modelId: string,
    readonly promptTokens: number,
    readonly maxOutputTokens: number,
    /** Streams ask for usage: message_delta reports the billed counts. */
    readonly includeUsage: boolean,
    private readonly reply: FastifyReply,
    readonly chargeMicros: (usage: Usage) => number,
  ) {}

  get client(): ClientLink {
    return this;
  }

  get aborted(): boolean {
    const res = this.reply.raw;
    return this.isGone || (res.destroyed && !res.writableFinished);
  }

  onAbort(listener: () => void): () => void {
    if (this.aborted) {
      listener();
      return () => {};
    }
    if (!this.isListening) {
      this.isListening = true;
      const res = this.reply.raw;
      res.once('close', () => {
        if (!res.writableFinished) this.gone();
      });
    }
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at !== -1) this.listeners.splice(at, 1);
    };
  }

  stop(): void {
    this.stopped = true;
    this.gone();
  }

  private gone(): void {
    this.isGone = true;
    for (const each of this.listeners.splice(0)) each();
  }
}
