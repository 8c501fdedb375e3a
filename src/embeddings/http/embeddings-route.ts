// POST embeddings: texts or token ids in, vectors out, from a demo embedding model or the
// upstreams' /embeddings. Billed for input tokens only; never streamed.
import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../../services.js';
import { validateEmbeddingsRequest, type EmbeddingsRequest } from '../embeddings-request.js';
import { planInput } from '../../chat/plan.js';
import { andThen } from '../../maybe-promise.js';
import { embedderOf } from '../../models/catalog.js';
import { countTextsTokens } from '../../models/tokens.js';
import { API_ERROR_SURFACE, meteredRoute, type MeteredEndpoint } from '../../http/metered-route.js';

const EMBEDDINGS: MeteredEndpoint<EmbeddingsRequest> = {
  endpoint: 'embeddings',
  parse: validateEmbeddingsRequest,
  modelOf: (request) => request.model,
  plan: (request, model) => {
    let tokenIds = 0;
    const texts: string[] = [];
    for (const input of request.inputs) {
      if (typeof input === 'string') texts.push(input);
      else tokenIds += input.length;
    }
    return andThen(countTextsTokens(texts), (textTokens) => planInput(textTokens + tokenIds, model.calibrations.of('embeddings')));
  },
  answer: ({ request, rawJson, model, plan, client }) =>
    embedderOf(model).embed({ request, requestText: rawJson ?? undefined, modelId: model.id, promptTokens: plan.promptTokens, client }),
  errors: API_ERROR_SURFACE,
};

export function embeddingsRoute(api: FastifyInstance, services: AppServices): void {
  meteredRoute(api, services, '/embeddings', EMBEDDINGS);
}
