// The request log: every API request of the account within `request_log.retention_days`,
// newest first, refused ones included (with the reason), filtered by key, model and
// outcome, a page at a time. Usage charts stay about settled usage (usage.ts).
import { Type } from '@sinclair/typebox';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { requestLogPage } from '../../store/request-log-page.js';
import { ownOnly, signedIn, type DashboardServices } from '../context.js';
import { TokenKinds } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';
import type * as Json from '../api-types.js';


const Query = Type.Object({
  key: Type.Optional(Type.String({ maxLength: 100 })),
  /** In an organisation: one member's requests (a `member` sees only their own). */
  member: Type.Optional(Type.String({ maxLength: 100 })),
  model: Type.Optional(Type.String({ maxLength: 200 })),
  outcome: Type.Optional(Type.Union([Type.Literal('succeeded'), Type.Literal('failed')])),
  /** The `next` of the page before. */
  before: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^|]+\\|[^|]+$' })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
});
const RequestLog = Type.Object({
  retentionDays: Type.Integer(),
  requests: Type.Array(
    Type.Object({
      id: Type.String(),
      requestId: Type.String(),
      at: Type.String(),
      keyId: Type.String(),
      keyName: Type.String(),
      model: Nullable(Type.String()),
      status: Type.Integer(),
      reason: Nullable(Type.String()),
      promptTokens: Type.Integer(),
      completionTokens: Type.Integer(),
      ...TokenKinds,
      costMicros: Type.Integer(),
      shortfallMicros: Type.Integer(),
      streamed: Type.Boolean(),
      refused: Type.Boolean(),
    }),
  ),
  /** Where the next page starts; null on the last. */
  next: Nullable(Type.String()),
});
export type RequestLog = JsonOf<typeof RequestLog, Json.RequestLog>;

export function requestLogRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, config } = services;
  dashboard.get('/requests', { schema: { querystring: Query, response: { 200: RequestLog } } }, async (request) => {
    const caller = signedIn(request);
    const { key, member, model, outcome, before, limit } = request.query;
    const retentionDays = config.request_log.retention_days;
    const memberId = ownOnly(caller, 'usage') ?? member;
    const { entries, next } = await requestLogPage(store, caller.account.id, retentionDays, { keyId: key, memberId, model, outcome, before, limit });
    return { retentionDays, requests: entries, next };
  });
}
