// GET /healthz: the process is alive and serving. GET /readyz: it can take traffic: the
// store answers, and Redis in shared mode; 503 while starting or draining (Fastify answers
// 503 itself once closing), so a load balancer stops sending before the process stops.
import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../../services.js';

const CHECK_TIMEOUT_MS = 1_000;

export function healthRoutes(app: FastifyInstance, services: AppServices): void {
  app.get('/healthz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    const checks = {
      store: await passes(() => services.store.latestChangeId()),
      ...(services.admission.ping ? { redis: await passes(() => services.admission.ping!()) } : {}),
    };
    const ready = Object.values(checks).every((state) => state === 'ok');
    reply.code(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'unavailable', checks };
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
