// The admin API's OpenAPI document, built by @fastify/swagger from the same TypeBox schemas
// that validate requests and serialize replies, served at /api/admin/v1/openapi.json.
import type { SwaggerOptions } from '@fastify/swagger';
import { documentErrors } from './openapi-errors.js';

export const OPENAPI_OPTIONS: SwaggerOptions = {
  openapi: {
    // 3.1: JSON Schema as it is, so `type: ['string', 'null']` needs no translation.
    openapi: '3.1.0',
    info: {
      title: 'lmgate admin API',
      version: '1',
      description:
        'Accounts, keys, credits, redemption codes, usage, upstream health and the audit log. ' +
        'Authenticate with an admin key as `Authorization: Bearer sk-lmgadm-...` (scopes: read for every GET; ' +
        'accounts, credits or keys for writes), or with an operator\'s dashboard session and its CSRF token. ' +
        'Money is in integer micro-credits (1 credit = 1,000,000).',
    },
    servers: [{ url: '/api/admin/v1' }],
    components: {
      securitySchemes: {
        adminKey: { type: 'http', scheme: 'bearer', description: 'An admin key (lmgate admin-keys create --scope ...)' },
        operatorSession: { type: 'apiKey', in: 'cookie', name: 'lmgate_session', description: "An operator's dashboard session; writes also send x-csrf-token" },
      },
    },
    security: [{ adminKey: [] }, { operatorSession: [] }],
  },
  // Paths in the document are relative to the server above; each operation lists its scope and errors.
  transform: ({ schema, url, route }) => ({ schema: documentErrors(schema, route), url: url.replace(/^\/api\/admin\/v1/, '') || '/' }),
};
