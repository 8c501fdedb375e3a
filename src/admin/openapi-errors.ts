// What the OpenAPI document says of each admin operation beyond its success: the scope it
// needs (in `security` and in words) and the errors it can answer with, each in the one
// error body every surface renders (http/error-reply.ts).
import type { FastifySchema, RouteOptions } from 'fastify';
import type { AdminScope } from '../store/store.js';

const ErrorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'code', 'request_id'],
      properties: {
        message: { type: 'string' },
        code: { type: 'integer', description: 'the HTTP status' },
        request_id: { type: 'string' },
        reason: { type: 'string', description: 'a 403’s: scope_missing, or why the caller was refused' },
      },
    },
    errors: { type: 'object', description: 'a 422’s: the messages by field', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
} as const;

const error = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });

/** Conflicts a route can answer with, by "METHOD url" (as registered). */
const CONFLICTS: Record<string, string> = {
  'POST /api/admin/v1/accounts': 'An account with this email already exists.',
  'POST /api/admin/v1/accounts/:id/credits/adjust': 'The balance would go below zero.',
};

/** The route's schema with its scope and error responses added; the route's own schema is left as it is. */
export function documentErrors(schema: FastifySchema, route: RouteOptions): FastifySchema {
  if ((schema as FastifySchema | undefined) === undefined || route.config?.public === true) return schema;
  const method = [route.method].flat()[0]!;
  const scope: AdminScope = route.config?.adminScope ?? 'read';
  const errors: Record<string, unknown> = {
    401: error('No credentials, or an admin key or session that is not valid.'),
    403: error(`The caller lacks the ${scope} scope (reason: scope_missing).`),
  };
  if (schema.body !== undefined) {
    errors[400] = error('The body is not valid JSON.');
    errors[415] = error('The body is not sent as application/json.');
  }
  if (schema.params !== undefined) errors[404] = error('No such account, key or code.');
  if (schema.body !== undefined || schema.querystring !== undefined) errors[422] = error('A field is not valid: `errors` names each.');
  const conflict = CONFLICTS[`${method} ${route.url}`];
  if (conflict !== undefined) errors[409] = error(conflict);
  const scopeWords = `Needs the \`${scope}\` scope (an operator's session has every scope).`;
  return {
    ...schema,
    description: schema.description === undefined ? scopeWords : `${schema.description} ${scopeWords}`,
    // OpenAPI 3.1 lets a non-OAuth scheme list the roles it needs.
    security: [{ adminKey: [scope] }, { operatorSession: [] }],
    'x-required-scope': scope,
    response: { ...(schema.response as Record<string, unknown>), ...errors },
  } as FastifySchema;
}
