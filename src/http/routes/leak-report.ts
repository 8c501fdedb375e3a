// POST /api/keys/leak-report: keys found in public, reported by a secret scanner (GitHub's
// partner program posts `[{token, type, url, source}]`) or by a person (`{keys, url}`).
// No authentication: holding a key is proof enough to retire it. The checksum turns garbage
// away without a lookup; every active key named is revoked as leaked, at once, on every
// instance. The answer depends only on what was posted, never on whether a key existed.
import { Type, type Static } from '@sinclair/typebox';
import { hashApiKey, isWellFormedApiKey } from '../../auth/api-key.js';
import type { ApiKeyRecord } from '../../store/store.js';
import { compileInputSchema } from '../../validation/input-validator.js';
import { configuredOrigin } from '../../auth/account-links.js';
import type { AppServices } from '../../services.js';
import type { TypeBoxFastify, TypeBoxTypeProvider } from '../typebox.js';

/** Reports per client address per window; a scanner sends many keys in one report. */
export const LEAK_REPORTS_PER_WINDOW = 10;
const WINDOW_MS = 60_000;
const MAX_KEYS = 1_000;

const Token = Type.String({ maxLength: 1_000 });
const Url = Type.String({ maxLength: 2_000 });
const ScannerReport = Type.Array(
  Type.Object({ token: Token, type: Type.Optional(Type.String({ maxLength: 200 })), url: Type.Optional(Url), source: Type.Optional(Type.String({ maxLength: 200 })) }),
  { minItems: 1, maxItems: MAX_KEYS },
);
const PlainReport = Type.Object({ keys: Type.Array(Token, { minItems: 1, maxItems: MAX_KEYS }), url: Type.Optional(Url) }, { additionalProperties: false });
const Report = Type.Union([ScannerReport, PlainReport]);
const Received = Type.Object({ received: Type.Integer() });

export async function leakReportRoute(app: TypeBoxFastify, services: AppServices): Promise<void> {
  const throttle = services.failureThrottle('leak-report', LEAK_REPORTS_PER_WINDOW, WINDOW_MS);
  await app.register(async (scope) => {
    const typed = scope.withTypeProvider<TypeBoxTypeProvider>();
    typed.setValidatorCompiler(compileInputSchema);
    typed.post('/api/keys/leak-report', { bodyLimit: 1024 * 1024, schema: { body: Report, response: { 200: Received } } }, async (request) => {
      const address = `leak:${request.ip}`;
      await throttle.assertAllowed(address);
      await throttle.recordFailure(address);
      const reported = reportedKeys(request.body);
      for (const { token, url } of reported) {
        if (!isWellFormedApiKey(token)) continue;
        const key = await services.commands.keys.revokeLeaked(hashApiKey(token), url);
        if (key) {
          request.log.warn({ key_id: key.id, account_id: key.accountId, leak_url: url }, 'key reported leaked and revoked');
          // After the answer, which must not wait on (or tell of) the mail.
          if (services.mailer) tellOwner(services, key).catch((err: unknown) => request.log.error({ err, key_id: key.id }, 'leaked key mail failed'));
        }
      }
      return { received: reported.length };
    });
  });
}

/** The account's owner hears of it by mail too (the dashboard shows it without). */
async function tellOwner(services: AppServices, key: ApiKeyRecord): Promise<void> {
  const account = await services.store.findAccount(key.accountId);
  if (!account || !services.mailer) return;
  const where = key.leakUrl === null ? '' : ` at ${key.leakUrl}`;
  await services.mailer.send({
    to: account.email,
    subject: 'An API key of yours was found in public and revoked',
    text:
      `Your lmgate API key "${key.name}" (${key.prefix}...${key.lastFour}) was reported found in public${where}, ` +
      `so it was revoked at ${key.revokedAt} and no longer works.\n\n` +
      `Generate a new key in the dashboard (${configuredOrigin(services.config)}/keys) and replace the old one wherever it was used.\n`,
  });
}

function reportedKeys(report: Static<typeof Report>): { token: string; url: string | null }[] {
  if (Array.isArray(report)) return report.map(({ token, url }) => ({ token: token.trim(), url: url ?? null }));
  return report.keys.map((token) => ({ token: token.trim(), url: report.url ?? null }));
}
