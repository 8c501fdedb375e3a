// buildApp(config, deps) → a ready-to-listen Fastify instance. It never listens itself, so
// tests and main.ts decide where it runs.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { adminRoutes } from './admin/plugin.js';
import { Authenticator } from './auth/authenticate.js';
import { KeyCache } from './auth/key-cache.js';
import { LastUsedTracker } from './auth/last-used.js';
import { UsageHousekeeping } from './cluster/usage-housekeeping.js';
import { RefusalLog } from './http/refusal-log.js';
import { ChangeFeed } from './cluster/change-feed.js';
import { ProcessCaches } from './cluster/local-caches.js';
import { Commands } from './commands/commands.js';
import { dashboardRoutes } from './dashboard/plugin.js';
import { memoryFailureThrottle } from './web-session/sign-in-throttle.js';
import { Sessions } from './web-session/sessions.js';
import type { Config } from './config/schema.js';
import { clientErrorHandler, frameworkErrors, checkRequestHead, refuseConnect, refuseExpectation, REQUEST_TIMEOUT_MS } from './http/client-errors.js';
import { installErrorHandling } from './http/error-handler.js';
import { InFlight } from './http/in-flight.js';
import { readTls } from './http/transport-policy.js';
import { generateRequestId } from './http/request-id.js';
import type { TypeBoxTypeProvider } from './http/typebox.js';
import { apiRoutes } from './http/routes/api.js';
import { webAppRoutes } from './http/routes/web-app.js';
import type { AdmissionService } from './billing/admission.js';
import { MemoryAdmission } from './billing/memory-admission.js';
import { Balances } from './billing/balances.js';
import { MemorySpend } from './billing/memory-spend.js';
import { MemoryCreditBook } from './billing/reservations.js';
import { Tiers } from './billing/tiers.js';
import { UsageWriter } from './billing/usage-writer.js';
import { billingSubscriptionRoute } from './http/routes/billing-subscription.js';
import { AccountLimits } from './limits/account-limits.js';
import { MemoryLimiter } from './limits/memory-limiter.js';
import { ModelCatalog } from './models/catalog.js';
import { EventLoopDelay } from './observability/event-loop.js';
import { Metrics } from './observability/metrics.js';
import { healthRoutes } from './http/routes/health.js';
import { metricsRoute } from './http/routes/metrics.js';
import { leakReportRoute } from './http/routes/leak-report.js';
import { stripeWebhookRoute } from './http/routes/stripe-webhook.js';
import type { Payments } from './payments/payments.js';
import type { AppServices } from './services.js';
import type { SharedMode } from './shared/connect.js';
import type { Change, Store } from './store/store.js';
import { WebhookWorker, type WebhookWorkerOptions } from './webhooks/worker.js';
import { AlertWatch } from './alerts/alert-watch.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Exposed so tests (and the admin API) can apply pending changes now. */
    changeFeed: ChangeFeed;
    /** The writes of this instance (tests act as an operator or a dashboard would). */
    commands: Commands;
  }
}

export interface AppDeps {
  store: Store;
  /** Shared mode (shared/connect.ts); limits and credits in this process when absent. */
  shared?: SharedMode;
  /** The certificate and key of `server.tls`, when the caller read them already. */
  tls?: { cert: Buffer; key: Buffer };
  /** Test hook: how often to poll for changes made elsewhere (default 250 ms). */
  changePollMs?: number;
  /** Test hook: the webhook sender's clock, schedule and timings. */
  webhooks?: WebhookWorkerOptions;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Limits, credits and settled usage; tests flush it to read the store. */
    admission: AdmissionService;
    /** The answers being generated; closing the app drains them. */
    inFlight: InFlight;
    /** Stripe payments, when configured. */
    payments: Payments | undefined;
    /** Refused API requests waiting to be written; tests flush it to read the store. */
    refusals: RefusalLog;
    /** Keys' "last used" stamps waiting to be written; tests flush it to read the store. */
    lastUsed: LastUsedTracker;
    /** Balance and budget alerts; tests wait for its checks to finish. */
    alerts: AlertWatch;
  }
}

const LAST_USED_FLUSH_MS = 5_000;
const REFUSALS_FLUSH_MS = 1_000;
const RETENTION_SWEEP_MS = 60 * 60 * 1000;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const { store } = deps;
  const app = Fastify({
    ...tlsOptions(config, deps.tls),
    logger: loggerOptions(config),
    logController: new Fastify.LogController({
      // Per-request log lines cost as much as the request itself; debug turns them on.
      disableRequestLogging: !['debug', 'trace'].includes(config.log.level),
      requestIdLogLabel: 'request_id',
    }),
    // A child logger per request costs a serialization of its bindings; below debug the
    // app logger is used as it is and error logs name the request id themselves.
    ...(['debug', 'trace'].includes(config.log.level) ? {} : { childLoggerFactory: (logger: unknown) => logger }),
    bodyLimit: Math.floor(config.server.body_limit_mb * 1024 * 1024),
    trustProxy: config.server.trust_proxy,
    genReqId: generateRequestId,
    requestIdHeader: false,
    // A draining instance answers 503 itself (http/in-flight.ts), in the spec's body.
    return503OnClosing: false,
    requestTimeout: REQUEST_TIMEOUT_MS,
    clientErrorHandler,
    frameworkErrors,
    // Node would refuse these itself with an empty body: lmgate refuses in its own (client-errors.ts).
    http: { requireHostHeader: false },
  } as FastifyServerOptions);

  const keyCache = new KeyCache();
  const lastUsed = new LastUsedTracker(store);
  const refusals = new RefusalLog(store, config.request_log.retention_days);
  const metrics = new Metrics();
  const eventLoopDelay = new EventLoopDelay();
  metrics.watchEventLoop(eventLoopDelay);
  const admission = deps.shared?.admission ?? memoryAdmission(store, (err) => app.log.error({ err }, 'usage flush failed'));
  metrics.watchUsageQueue(() => admission.health().pendingUsage);
  metrics.watchUsageThread(() => store.usageThreadCpuSeconds());
  metrics.watchMode(deps.shared && (() => deps.shared!.admission.health().shared!));
  admission.observeUsageWrites({
    batchWritten: (records, seconds) => metrics.batchWritten(records, seconds),
    chargeCapped: (charge) => {
      metrics.chargeCapped(charge);
      // Never expected: the request path reserves before it spends. A cap means a balance
      // was taken elsewhere in between, and the ledger shows less than the usage cost.
      app.log.warn({ account_id: charge.accountId, usage_id: charge.usageId, cost_micros: charge.costMicros, charged_micros: charge.chargedMicros }, 'usage charge capped at the balance left');
    },
    // Balance and budget alerts, checked from the store once usage is in it (alerts/alert-watch.ts).
    usageStored: (records) => alerts.usageStored(records),
  });
  const caches = new ProcessCaches(
    keyCache,
    admission,
    deps.shared && ((change) => deps.shared!.changes.publish(change)),
    (accountId) => alerts.forget(accountId),
  );
  const commands = new Commands(store, caches);
  const balances = new Balances(admission);
  // Stripe's client and nodemailer are loaded only when configured.
  const payments =
    config.payments.stripe &&
    (await import('./payments/payments.js')).openPayments(config, {
      store,
      commands,
      balances,
      onError: (err, accountId) => app.log.error({ err, account_id: accountId }, 'auto-recharge failed'),
    });
  const services: AppServices = {
    config,
    store,
    sessions: new Sessions(store),
    catalog: new ModelCatalog(config, { metrics }),
    keyCache,
    authenticator: new Authenticator(store, keyCache),
    lastUsed,
    refusals,
    tiers: new Tiers(config),
    admission,
    pingSharedState: admission.ping && (() => admission.ping!()),
    balances,
    commands,
    inFlight: new InFlight(),
    failureThrottle: deps.shared?.throttle ?? memoryFailureThrottle,
    payments,
    mailer: config.smtp && (await import('./mail/mailer.js')).openMailer(config.smtp),
  };
  const alerts = new AlertWatch(store, commands.alerts, services.mailer, {
    onError: (err, accountId) => app.log.error({ err, account_id: accountId }, 'alert check failed'),
    onMailError: (err, accountId, alert) => app.log.warn({ err, account_id: accountId, alert: alert.type }, 'alert mail not sent'),
  });

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onRequest', checkRequestHead);
  app.addHook('onRequest', services.inFlight.refuseWhileDraining);
  app.server.on('connect', refuseConnect);
  app.server.on('checkExpectation', refuseExpectation);
  installErrorHandling(app, metrics);

  if (payments) {
    await stripeWebhookRoute(app, payments);
  }
  const apiPlugin = apiRoutes(services);
  await app.register(apiPlugin, { prefix: '/v1' });
  await app.register(apiPlugin, { prefix: '/api/v1' });
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  billingSubscriptionRoute(typed, services);
  await leakReportRoute(typed, services);
  metricsRoute(app, config, metrics);
  healthRoutes(typed, services);
  await app.register(dashboardRoutes(services), { prefix: '/api/dashboard' });
  await app.register(adminRoutes(services, metrics, store), { prefix: '/api/admin/v1' });
  if (config.server.api_host) {
    // The dedicated API hostname: same handlers, chosen by Host. Only the API lives there.
    await app.register(apiPlugin, { prefix: '/v1', host: config.server.api_host });
  }
  await app.register(webAppRoutes, { apiHost: config.server.api_host });

  const applyChange = (change: Change): Promise<void> =>
    caches.apply(change).catch((err: unknown) => app.log.error({ err, change }, 'applying a change failed'));
  const changeFeed = new ChangeFeed(
    store,
    applyChange,
    (err) => app.log.error({ err }, 'change feed poll failed'),
    deps.changePollMs,
  );
  const flushTimer = setInterval(() => {
    lastUsed.flush().catch((err: unknown) => app.log.error({ err }, 'last-used flush failed'));
  }, LAST_USED_FLUSH_MS);
  flushTimer.unref();
  const refusalTimer = setInterval(() => {
    refusals.flush().catch((err: unknown) => app.log.error({ err }, 'refused requests flush failed'));
  }, REFUSALS_FLUSH_MS);
  refusalTimer.unref();
  const housekeeping = new UsageHousekeeping(store, config.usage.retention_days);
  const sweep = (): void => {
    housekeeping.run().catch((err: unknown) => app.log.error({ err }, 'usage partitions or retention sweep failed'));
    refusals.prune().catch((err: unknown) => app.log.error({ err }, 'request log retention sweep failed'));
  };
  sweep();
  const pruneTimer = setInterval(sweep, RETENTION_SWEEP_MS);
  pruneTimer.unref();
  // Customer webhooks go out from every instance, off the request path (webhooks/worker.ts).
  const webhookWorker = new WebhookWorker(store, {
    timeoutMs: config.webhooks.timeout_seconds * 1000,
    allowPrivateAddresses: config.webhooks.allow_private_addresses,
    onError: (err) => app.log.error({ err }, 'webhook delivery failed'),
    ...deps.webhooks,
  });

  app.decorate('changeFeed', changeFeed);
  app.decorate('commands', services.commands);
  app.decorate('admission', admission);
  app.decorate('inFlight', services.inFlight);
  app.decorate('refusals', refusals);
  app.decorate('lastUsed', lastUsed);
  app.decorate('payments', payments);
  app.decorate('alerts', alerts);
  app.addHook('onReady', async () => {
    eventLoopDelay.start();
    await changeFeed.start();
    await deps.shared?.changes.subscribe(applyChange);
    await admission.start();
    deps.shared?.calibrations.start(services.catalog);
    webhookWorker.start();
  });
  // Node closes the connections idle when closing starts; one whose request finishes later
  // would stay open until its keep-alive timeout (72 s) and hold the shutdown that long.
  let idleSweep: NodeJS.Timeout | undefined;
  let cancelDrain = (): void => undefined;
  app.addHook('preClose', (done) => {
    cancelDrain = services.inFlight.drain(config.server.drain_seconds * 1000);
    idleSweep = setInterval(() => app.server.closeIdleConnections(), 50);
    done();
  });
  // onClose runs after in-flight requests finished, so every settled charge is queued.
  app.addHook('onClose', async () => {
    cancelDrain();
    clearInterval(idleSweep);
    clearInterval(flushTimer);
    clearInterval(refusalTimer);
    clearInterval(pruneTimer);
    eventLoopDelay.stop();
    await changeFeed.stop();
    await webhookWorker.stop();
    await deps.shared?.calibrations.stop();
    await payments?.autoRecharge.idle();
    await Promise.all([lastUsed.flush(), refusals.flush(), admission.close(), services.catalog.close()]);
    // The last batches' checks, and their mail, before the mailer and the store close.
    await alerts.idle();
    services.mailer?.close();
  });
  return app;
}

function memoryAdmission(store: Store, onError: (err: unknown) => void): AdmissionService {
  const credits = new MemoryCreditBook(store);
  const writer = new UsageWriter(store, credits, { onError });
  return new MemoryAdmission(new AccountLimits(new MemoryLimiter(), new MemoryLimiter()), credits, writer, new MemorySpend(store, writer));
}

function tlsOptions(config: Config, read: AppDeps['tls']): Record<string, unknown> {
  const tls = read ?? readTls(config);
  return tls ? { https: tls } : {};
}

function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  if (config.log.level === 'silent') return false;
  return {
    level: config.log.level,
    serializers: {
      // Never log query strings: a client may have put its key there (spec 5.3).
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, path: req.url.split('?')[0], id: req.id }),
    },
  };
}
