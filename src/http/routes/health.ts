// GET /healthz: the process is alive and serving. GET /readyz: it can take traffic: the
// store answers, and Redis in shared mode; 503 while starting or draining, so a load
// balancer stops sending before the process stops.
import { Type } from '@sinclair/typebox';
import type { AppServices } from '../../services.js';
import type { TypeBoxFastify } from '../typebox.js';

const CHECK_TIMEOUT_MS = 1_000;

const Alive = Type.Object({ status: Type.String() });
const Readiness = Type.Object({
  status: Type.String(),
  checks: Type.Object({ store: Type.String(), redis: Type.Optional(Type.String()) }),
});

export function healthRoutes(app: TypeBoxFastify, services: AppServices): void {
  app.get('/healthz', { schema: { response: { 200: Alive } } }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', { schema: { response: { 200: Readiness, 503: Readiness } } }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    const checks = {
      store: await passes(() => services.store.latestChangeId()),
      ...(services.pingSharedState ? { redis: await passes(services.pingSharedState) } : {}),
    };
    const ready = Object.values(checks).every((state) => state === 'ok');
    const status = services.inFlight.draining ? 'draining' : ready ? 'ready' : 'unavailable';
    reply.code(status === 'ready' ? 200 : 503);
    return { status, checks };
  });
}

async function passes(check: () => Promise<unknown>): Promise<'ok' | 'failing'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch {
    return 'failing';
  } finally {
    clearTimeout(timer);
  }
}
