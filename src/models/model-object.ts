// A catalogue model as GET /v1/models shows it: OpenAI's model object, plus context, output
// ceiling, price and the endpoints that serve it. Properties in the order they are written.
import { Type, type Static } from '@sinclair/typebox';

export const ModelObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
  context_length: Type.Integer(),
  max_output_tokens: Type.Integer(),
  /** Credits per million tokens of each kind. */
  pricing: Type.Object({
    input: Type.Number(),
    cached_input: Type.Number(),
    cache_write: Type.Number(),
    cache_write_1h: Type.Number(),
    output: Type.Number(),
    reasoning: Type.Number(),
    unit: Type.Literal('credits per 1M tokens'),
  }),
  /** Config `endpoints`: chat, responses, completions, embeddings. */
  endpoints: Type.Array(Type.String()),
  description: Type.Optional(Type.String()),
});
export type ModelObject = Static<typeof ModelObject>;
