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
    const served = ADMIN_ROUTES.map((route) => `${route.method} ${route.path.replace(/:(account|key|code|org)/, '{id}').replace(':member', '{account}')}`);
    expect(listed.sort()).toEqual([...new Set(served)].sort());
  });

  it('describes bodies and query parameters from the schemas that validate them', () => {
    const grant = document.paths['/accounts/{id}/credits/grant']!.post!;
    expect(JSON.stringify(grant.requestBody)).toContain('amount_micros');
    expect(document.paths['/accounts']!.get!.parameters!.map((p) => p.name).sort()).toEqual(['limit', 'offset', 'search', 'sort']);
    expect(document).toMatchObject({ components: { securitySchemes: { adminKey: { type: 'http', scheme: 'bearer' } } } });
  });

  it("lists each operation's error responses and the scope it needs", () => {
    type Operation = { security?: Record<string, string[]>[]; description?: string; responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
    const operation = (path: string, method: string) => (document.paths[path] as unknown as Record<string, Operation>)[method]!;
    for (const route of ADMIN_ROUTES) {
      const op = operation(route.path.replace(/:(account|key|code|org)/, '{id}').replace(':member', '{account}'), route.method.toLowerCase());
      expect(op.security, `${route.method} ${route.path}`).toEqual([{ adminKey: [route.scope] }, { operatorSession: [] }]);
      expect(op.description).toContain(`Needs the \`${route.scope}\` scope`);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403']));
      if (route.path.includes(':')) expect(Object.keys(op.responses)).toContain('404');
      if (route.body !== undefined) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '415', '422']));
    }
    const adjust = operation('/accounts/{id}/credits/adjust', 'post');
    expect(Object.keys(adjust.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '415', '422']);
    expect(JSON.stringify(adjust.responses['409']!.content!['application/json']!.schema)).toContain('request_id');
    expect(Object.keys(operation('/accounts', 'post').responses)).toContain('409');
    expect(Object.keys(operation('/me', 'get').responses).sort()).toEqual(['200', '401', '403']);
  });
});
