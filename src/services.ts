// What the app is built from: the services every route and plugin is handed. Built once
// by app.ts; a type only, so routes depend on it and not on the app.
import type { Authenticator } from './auth/authenticate.js';
import type { KeyCache } from './auth/key-cache.js';
import type { LastUsedTracker } from './auth/last-used.js';
import type { Admission } from './billing/admission.js';
import type { Balances } from './billing/balances.js';
import type { Tiers } from './billing/tiers.js';
import type { Commands } from './commands/commands.js';
import type { Config } from './config/schema.js';
import type { FailureThrottleFactory } from './web-session/sign-in-throttle.js';
import type { InFlight } from './http/in-flight.js';
import type { RefusalLog } from './http/refusal-log.js';
import type { Mailer } from './mail/mailer.js';
import type { ModelCatalog } from './models/catalog.js';
import type { Payments } from './payments/payments.js';
import type { StoreQueries } from './store/queries.js';
import type { Sessions } from './web-session/sessions.js';

export interface AppServices {
  config: Config;
  /** Reads only: every write goes through `commands` (or `sessions`, the browsers' own state). */
  store: StoreQueries;
  /** Dashboard sessions, which operators use for the admin API too. */
  sessions: Sessions;
  catalog: ModelCatalog;
  keyCache: KeyCache;
  authenticator: Authenticator;
  /** Keys' "last used" stamps: requests answered without an error. */
  lastUsed: LastUsedTracker;
  /** API requests refused before any model, for the customer's request log. */
  refusals: RefusalLog;
  tiers: Tiers;
  /** Limits and credits: in this process, or in Redis in shared mode. */
  admission: Admission;
  /** Whether the shared state answers (shared mode only), for /readyz. */
  pingSharedState: (() => Promise<unknown>) | undefined;
  /** Every balance shown, read one way (billing/balances.ts). */
  balances: Balances;
  /** Every write to accounts, keys and credits. */
  commands: Commands;
  /** Makes the dashboard's failure throttles: in this process, or in Redis in shared mode. */
  failureThrottle: FailureThrottleFactory;
  /** The answers being generated, which a shutdown drains. */
  inFlight: InFlight;
  /** Stripe, when `payments.stripe` is configured. */
  payments?: Payments;
  /** Mail to account owners, when `smtp` is configured. */
  mailer?: Mailer;
}
