// OpenAI's embeddings answer: a `list` of `embedding` objects, each vector as numbers or,
// with encoding_format base64, as the base64 of its little-endian float32 bytes (what the
// `openai` client asks for by default and decodes).
import type { EncodingFormat } from './embeddings-request.js';

export function embeddingsJson(modelId: string, vectors: readonly Float64Array[], format: EncodingFormat, promptTokens: number): string {
  const data = vectors.map((vector, index) => ({
    object: 'embedding',
    index,
    embedding: format === 'base64' ? base64Of(vector) : Array.from(vector),
  }));
  return JSON.stringify({ object: 'list', data, model: modelId, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } });
}

function base64Of(vector: Float64Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}
