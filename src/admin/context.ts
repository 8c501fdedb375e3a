// What every admin route works with: the app's services, the dashboard's sessions (an
// operator signs in there), the metrics registry (upstream health), and the caller the
// plugin's hook identified.
import type { FastifyRequest } from 'fastify';
import { UnauthenticatedError } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';
import type { AppServices } from '../services.js';
import type { AdminScope } from '../store/store.js';
import type { AdminCaller } from './caller.js';

export interface AdminServices extends AppServices {
  metrics: Metrics;
}

declare module 'fastify' {
  interface FastifyRequest {
    adminCaller: AdminCaller | null;
  }
  interface FastifyContextConfig {
    /** The scope an admin route needs; a GET needs `read` unless it says otherwise. */
    adminScope?: AdminScope;
  }
}

/** The caller the plugin's hook identified. */
export function callerOf(request: FastifyRequest): AdminCaller {
  if (!request.adminCaller) throw new UnauthenticatedError('no admin caller');
  return request.adminCaller;
}
