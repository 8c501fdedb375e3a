// The answers being generated, so that a shutdown can drain: refuse new requests at once,
// let running answers finish up to the drain time, then stop those still running. A stopped
// answer ends as a client leaving would end it (the backend returns what it generated,
// which is charged) but with a 503 for the client, as its last stream event.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ShuttingDownError } from '../errors.js';

export interface Stoppable {
  stop(): void;
}

/** Routes that answer while draining: a load balancer reads readiness from them. */
const HEALTH_ROUTES = new Set(['/healthz', '/readyz']);

export class InFlight {
  private readonly running = new Set<Stoppable>();
  private isDraining = false;
  private isStopping = false;

  get draining(): boolean {
    return this.isDraining;
  }

  add(answer: Stoppable): void {
    // Admitted before the drain began, reaching its backend after the time was up.
    if (this.isStopping) answer.stop();
    else this.running.add(answer);
  }

  delete(answer: Stoppable): void {
    this.running.delete(answer);
  }

  /** Refuses new requests now; stops what still runs after `drainMs`. Returns a cancel. */
  drain(drainMs: number): () => void {
    this.isDraining = true;
    const timer = setTimeout(() => {
      this.isStopping = true;
      for (const answer of this.running) answer.stop();
      this.running.clear();
    }, drainMs);
    return () => clearTimeout(timer);
  }

  /** onRequest hook: while draining, every request but the health checks gets the 503. */
  readonly refuseWhileDraining = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    if (this.isDraining && !HEALTH_ROUTES.has(request.routeOptions.url ?? '')) return done(new ShuttingDownError());
    done();
  };
}
