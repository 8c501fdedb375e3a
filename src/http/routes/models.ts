import { Type } from '@sinclair/typebox';
import type { AppServices } from '../../services.js';
import { ModelObject } from '../../models/model-object.js';
import type { TypeBoxFastify } from '../typebox.js';

const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelObject) });

/** GET models, GET models/{id}: OpenAI's list and object shapes, plus price and context. */
export function modelRoutes(api: TypeBoxFastify, services: AppServices): void {
  api.get('/models', { schema: { response: { 200: ModelList } } }, async () => ({
    object: 'list' as const,
    data: services.catalog.list().map((model) => model.json),
  }));

  // A wildcard, because upstream model ids often hold a slash (meta-llama/Llama-3.1-8B).
  api.get<{ Params: { '*': string } }>('/models/*', { schema: { response: { 200: ModelObject } } }, async (request) =>
    services.catalog.resolve(decodeURIComponent(request.params['*'])).json,
  );
}
