// OpenAI's embeddings answer: a `list` of `embedding` objects, each vector as numbers or,
// with encoding_format base64, as the base64 of its little-endian float32 bytes (what the
// `openai` client asks for by default and decodes). Written one item at a time, so that
// a large answer can be built in slices.
import type { EncodingFormat } from './embeddings-request.js';

export function embeddingItemJson(index: number, vector: Float64Array, format: EncodingFormat): string {
  const embedding = format === 'base64' ? JSON.stringify(base64Of(vector)) : `[${vector.join(',')}]`;
  return `{"object":"embedding","index":${index},"embedding":${embedding}}`;
}

export function embeddingsJson(modelId: string, items: readonly string[], promptTokens: number): string {
  return `{"object":"list","data":[${items.join(',')}],"model":${JSON.stringify(modelId)},"usage":{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens}}}`;
}

function base64Of(vector: Float64Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}
