// The demo embedding model: a vector from the text alone, so equal texts give equal
// vectors on any instance, texts sharing words point the same way, and tests can check
// both. Words and pairs of adjacent words are hashed into signed buckets (the hashing
// trick), then the vector is scaled to length 1. A request's `dimensions` (at most the
// model's) is the number of buckets, so a short vector still holds every word.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ClientGoneError, ValidationError } from '../errors.js';
import { embeddingItemJson, embeddingsJson } from '../embeddings/embeddings-body.js';
import type { CompletionResult, EmbeddingBackend, EmbeddingCall } from './backend.js';

export interface DemoEmbedderOptions {
  /** The model's vector length; a request may ask for fewer. */
  dimensions: number;
}

// A large request (2048 inputs, or megabytes of text) is embedded in slices of about this
// long that hand the event loop back in between, as long prompts are counted.
const SLICE_MS = 8;
/** Terms hashed between two looks at the clock. */
const TERMS_PER_CHECK = 4096;

export function createDemoEmbedder(options: DemoEmbedderOptions): EmbeddingBackend {
  return {
    embed(call: EmbeddingCall): CompletionResult | Promise<CompletionResult> {
      const dimensions = call.request.dimensions ?? options.dimensions;
      if (dimensions > options.dimensions) throw new ValidationError({ dimensions: [`must be <= ${options.dimensions} for this model`] });
      const work = new EmbeddingWork(call, dimensions);
      if (work.runSlice()) return work.result();
      return (async () => {
        do {
          await yieldToEventLoop();
          if (call.client.aborted) throw new ClientGoneError();
        } while (!work.runSlice());
        return work.result();
      })();
    },
  };
}

/** One request's embeddings, made input by input and term by term, resumable between slices. */
class EmbeddingWork {
  private readonly items: string[] = [];
  private input = 0;
  private vector: Float64Array;
  private readonly words = /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu;
  private text = '';
  /** Position in the current token array. */
  private at = 0;
  private previous = '';
  private isStarted = false;

  constructor(
    private readonly call: EmbeddingCall,
    private readonly dimensions: number,
  ) {
    this.vector = new Float64Array(dimensions);
  }

  /** Works until done (true) or the slice is used up (false). */
  runSlice(): boolean {
    const { inputs } = this.call.request;
    const startedAtMs = performance.now();
    let terms = 0;
    while (this.input < inputs.length) {
      const input = inputs[this.input]!;
      if (!this.isStarted) this.start(input);
      const term = this.nextTerm(input);
      if (term === undefined) {
        this.items.push(embeddingItemJson(this.input, normalized(this.vector), this.call.request.encodingFormat));
        this.input++;
        this.isStarted = false;
      } else {
        addTerm(this.vector, term, 1);
        if (this.previous !== '') addTerm(this.vector, `${this.previous} ${term}`, 0.5);
        this.previous = term;
      }
      if (++terms % TERMS_PER_CHECK === 0 && performance.now() - startedAtMs >= SLICE_MS) return false;
    }
    return true;
  }

  result(): CompletionResult {
    const { call } = this;
    return { body: embeddingsJson(call.modelId, this.items, call.promptTokens), usage: { promptTokens: call.promptTokens, completionTokens: 0 }, finishReason: null };
  }

  private start(input: string | number[]): void {
    this.isStarted = true;
    this.vector = new Float64Array(this.dimensions);
    this.previous = '';
    this.at = 0;
    if (typeof input === 'string') {
      this.text = input.toLowerCase();
      this.words.lastIndex = 0;
    }
  }

  private nextTerm(input: string | number[]): string | undefined {
    if (typeof input !== 'string') return this.at < input.length ? String(input[this.at++]) : undefined;
    return this.words.exec(this.text)?.[0];
  }
}

function addTerm(vector: Float64Array, term: string, weight: number): void {
  const hash = fnv1a(term);
  vector[hash % vector.length]! += hash & 0x8000_0000 ? -weight : weight;
}

/** Scaled to length 1; a vector of zeros (the terms cancelled out) becomes a unit vector on the first axis. */
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
