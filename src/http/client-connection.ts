// The client's end of one metered request, as a backend sees it: whether the client is
// still there, and a way to hear when it goes. A shutdown's drain stops it the same way,
// with the client still there to be told.
import type { FastifyReply } from 'fastify';
import type { ClientLink } from '../models/backend.js';
import type { Stoppable } from './in-flight.js';

const NOTHING_TO_STOP = (): void => {};

/**
 * Listens for the client's disconnect only once a backend asks: an instant answer never
 * does. A class, so that every request's link has one shape.
 */
export class ClientConnection implements ClientLink, Stoppable {
  private abortListeners: (() => void)[] | undefined;
  private isGone = false;
  /** Ended by the shutdown's drain, not by the client. */
  stopped = false;

  constructor(private readonly reply: FastifyReply) {}

  get aborted(): boolean {
    const res = this.reply.raw;
    return this.isGone || (res.destroyed && !res.writableFinished);
  }

  onAbort(listener: () => void): () => void {
    if (this.aborted) {
      listener();
      return NOTHING_TO_STOP;
    }
    if (this.abortListeners === undefined) {
      const listeners: (() => void)[] = [];
      this.abortListeners = listeners;
      const res = this.reply.raw;
      res.once('close', () => {
        if (!res.writableFinished) this.gone();
      });
    }
    const listeners = this.abortListeners;
    listeners.push(listener);
    return () => {
      const at = listeners.indexOf(listener);
      if (at !== -1) listeners.splice(at, 1);
    };
  }

  stop(): void {
    this.stopped = true;
    this.gone();
  }

  private gone(): void {
    this.isGone = true;
    for (const each of this.abortListeners?.splice(0) ?? []) each();
  }
}
