// What every dashboard route works with: the app's services plus the dashboard's own, and
// the signed-in session the plugin's hook attached to the request.
import type { FastifyRequest } from 'fastify';
import type { AppServices } from '../services.js';
import { UnauthenticatedError } from '../errors.js';
import type { Account, Session } from '../store/store.js';
import type { DashboardThrottles } from '../web-session/sign-in-throttle.js';

export interface DashboardServices extends AppServices {
  throttles: DashboardThrottles;
}

export interface SignedIn {
  session: Session;
  account: Account;
}

declare module 'fastify' {
  interface FastifyRequest {
    signedIn: SignedIn | null;
  }
  interface FastifyContextConfig {
    /** A dashboard route that needs no session (config, sign-up, sign-in). */
    public?: boolean;
  }
}

/** The session the plugin's hook found; only called from routes that are not public. */
export function signedIn(request: FastifyRequest): SignedIn {
  if (!request.signedIn) throw new UnauthenticatedError('no dashboard session');
  return request.signedIn;
}
