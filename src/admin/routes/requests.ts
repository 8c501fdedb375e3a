// An account's request log as its customer sees it (the same store query: usage records and
// requests refused before any model, merged newest first), for the operator to see why a
// customer's calls fail: status, reason (a 422's with the fields it named), a page at a time.
import { Type } from '@sinclair/typebox';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { requestLogPage } from '../../store/request-log-page.js';
import type { AdminServices } from '../context.js';
import { AccountParams, requireAccount } from '../schemas.js';
import type * as Json from '../api-types.js';
import type { JsonOf } from '../../http/typebox.js';


const Query = Type.Object({
  key_id: Type.Optional(Type.String({ maxLength: 100 })),
  model: Type.Optional(Type.String({ maxLength: 200 })),
  outcome: Type.Optional(Type.Union([Type.Literal('succeeded'), Type.Literal('failed')], { description: 'failed: refusals and failed answers' })),
  before: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^|]+\\|[^|]+$', description: 'the previous page’s next' })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
});
const RequestLog = Type.Object({
  retention_days: Type.Integer({ description: 'request_log.retention_days: refusals older than this are gone' }),
  requests: Type.Array(
    Type.Object({
      id: Type.String(),
      request_id: Type.String(),
      at: Type.String(),
      key_id: Type.String(),
      key_name: Type.String(),
      model: Nullable(Type.String()),
      status: Type.Integer(),
      reason: Nullable(Type.String({ description: "a refusal's reason: a 403's reason, or the error's code; a 422's names its fields (validation_failed:messages)" })),
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      cost_micros: Type.Integer(),
      streamed: Type.Boolean(),
      refused: Type.Boolean({ description: 'refused before any model' }),
    }),
  ),
  next: Nullable(Type.String({ description: 'the next page’s before; null on the last' })),
});
export type RequestLog = JsonOf<typeof RequestLog, Json.AdminRequestLog>;

export function requestLogRoutes(admin: TypeBoxFastify, services: AdminServices): void {
  const { store, config } = services;
  admin.get(
    '/accounts/:id/requests',
    { schema: { tags: ['usage'], summary: "An account's request log, refusals included, newest first", params: AccountParams, querystring: Query, response: { 200: RequestLog } } },
    async (request) => {
      const account = await requireAccount(store, request.params.id);
      const { key_id: keyId, model, outcome, before, limit } = request.query;
      const retentionDays = config.request_log.retention_days;
      const { entries, next } = await requestLogPage(store, account.id, retentionDays, { keyId, model, outcome, before, limit });
      return {
        retention_days: retentionDays,
        requests: entries.map((entry) => ({
          id: entry.id,
          request_id: entry.requestId,
          at: entry.at,
          key_id: entry.keyId,
          key_name: entry.keyName,
          model: entry.model,
          status: entry.status,
          reason: entry.reason,
          prompt_tokens: entry.promptTokens,
          completion_tokens: entry.completionTokens,
          cost_micros: entry.costMicros,
          streamed: entry.streamed,
          refused: entry.refused,
        })),
        next,
      };
    },
  );
}
