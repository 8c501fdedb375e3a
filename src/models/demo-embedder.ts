// The demo embedding model: a vector from the text alone, so equal texts give equal
// vectors on any instance, texts sharing words point the same way, and tests can check
// both. Words and pairs of adjacent words are hashed into signed buckets (the hashing
// trick), then the vector is scaled to length 1. `dimensions` shortens it and scales it
// again, as OpenAI's text-embedding-3 models do.
import { ValidationError } from '../errors.js';
import { embeddingsJson } from '../embeddings/embeddings-body.js';
import type { CompletionResult, EmbeddingBackend, EmbeddingCall } from './backend.js';

export interface DemoEmbedderOptions {
  /** The model's vector length; a request may ask for fewer. */
  dimensions: number;
}

const WORD = /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu;

export function createDemoEmbedder(options: DemoEmbedderOptions): EmbeddingBackend {
  return {
    embed(call: EmbeddingCall): CompletionResult {
      const { request } = call;
      const dimensions = request.dimensions ?? options.dimensions;
      if (dimensions > options.dimensions) throw new ValidationError({ dimensions: [`must be <= ${options.dimensions} for this model`] });
      const vectors = request.inputs.map((input) => normalized(featuresOf(input, options.dimensions).subarray(0, dimensions)));
      const usage = { promptTokens: call.promptTokens, completionTokens: 0 };
      return { body: embeddingsJson(call.modelId, vectors, request.encodingFormat, call.promptTokens), usage, finishReason: null };
    },
  };
}

function featuresOf(input: string | number[], dimensions: number): Float64Array {
  const vector = new Float64Array(dimensions);
  const terms = typeof input === 'string' ? (input.toLowerCase().match(WORD) ?? []) : input.map(String);
  let previous = '';
  for (const term of terms) {
    addTerm(vector, term, 1);
    if (previous !== '') addTerm(vector, `${previous} ${term}`, 0.5);
    previous = term;
  }
  return vector;
}

function addTerm(vector: Float64Array, term: string, weight: number): void {
  const hash = fnv1a(term);
  const bucket = hash % vector.length;
  vector[bucket]! += hash & 0x8000_0000 ? -weight : weight;
}

/** Scaled to length 1; a vector of zeros (no terms fell in the buckets kept) becomes a unit vector on the first axis. */
function normalized(vector: Float64Array): Float64Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const out = new Float64Array(vector.length);
  if (sum === 0) {
    out[0] = 1;
    return out;
  }
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! * scale;
  return out;
}

/** 32-bit FNV-1a over UTF-16 code units: stable across processes and versions. */
function fnv1a(text: string): number {
  let hash = 0x811c_9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x0100_0193) >>> 0;
  }
  return hash;
}
