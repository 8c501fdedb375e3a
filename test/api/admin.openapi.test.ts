// The admin API's OpenAPI document: valid OpenAPI 3.1 (checked by swagger-parser), served
// without credentials, listing exactly the routes the API serves, each with the schemas
// that validate it.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LooseJson } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { ADMIN_ROUTES } from './admin-client.js';

describe('the admin API OpenAPI document', () => {
  let t: TestApp;
  let document: Record<string, unknown> & { paths: Record<string, Record<string, { requestBody?: unknown; parameters?: { name: string }[] }>> };

  beforeAll(async () => {
    t = await startApp();
    const res = await fetch(`${t.origin}/api/admin/v1/openapi.json`);
    expect(res.status).toBe(200);
    document = (await res.json()) as LooseJson;
  });
  afterAll(async () => {
    await t.close();
  });

  it('validates as OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    // validate() dereferences in place: hand it a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
  });

  it('lists every admin route, and nothing else', () => {
    const listed = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
    const served = ADMIN_ROUTES.map((route) => `${route.method} ${route.path.replace(/:(account|key|code)/, '{id}')}`);
    expect(listed.sort()).toEqual([...new Set(served)].sort());
  });

  it('describes bodies and query parameters from the schemas that validate them', () => {
    const grant = document.paths['/accounts/{id}/credits/grant']!.post!;
    expect(JSON.stringify(grant.requestBody)).toContain('amount_micros');
    expect(document.paths['/accounts']!.get!.parameters!.map((p) => p.name).sort()).toEqual(['limit', 'offset', 'search']);
    expect(document).toMatchObject({ components: { securitySchemes: { adminKey: { type: 'http', scheme: 'bearer' } } } });
  });
});
