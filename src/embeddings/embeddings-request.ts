// OpenAI's embeddings request, read and checked: `input` as one text, a list of texts, one
// list of token ids or a list of them; `dimensions`; `encoding_format` float or base64.
import { BodyFields } from '../validation/body-fields.js';

/** OpenAI's bounds: 2048 inputs a request; token ids are non-negative integers. */
export const MAX_EMBEDDING_INPUTS = 2048;

export type EncodingFormat = 'float' | 'base64';

export interface EmbeddingsRequest {
  model: string;
  /** Each input: a text, or token ids. */
  inputs: (string | number[])[];
  dimensions: number | undefined;
  encodingFormat: EncodingFormat;
  /** The body as sent, extra fields included, for an upstream. */
  body: Record<string, unknown>;
}

export function validateEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  const fields = BodyFields.of(body);
  const model = fields.model();
  const inputs = readInputs(fields);
  const dimensions = fields.integer('dimensions', 1);
  const format = fields.body.encoding_format;
  if (format != null && format !== 'float' && format !== 'base64') fields.refuse('encoding_format', 'must be one of: float, base64');
  fields.string('user');
  fields.check();
  return { model, inputs, dimensions, encodingFormat: format === 'base64' ? 'base64' : 'float', body: fields.body };
}

function readInputs(fields: BodyFields): (string | number[])[] {
  const input = fields.body.input;
  if (input === undefined) {
    fields.refuse('input', 'is required');
    return [];
  }
  if (typeof input === 'string') {
    if (input.length === 0) fields.refuse('input', 'must not be empty');
    return [input];
  }
  if (!Array.isArray(input) || input.length === 0) {
    fields.refuse('input', 'must be a non-empty string, or a non-empty array of strings or of token arrays');
    return [];
  }
  if (input.length > MAX_EMBEDDING_INPUTS) {
    fields.refuse('input', `must hold at most ${MAX_EMBEDDING_INPUTS} inputs`);
    return [];
  }
  // One list of token ids is one input.
  if (input.every((each) => typeof each === 'number')) {
    if (!isTokenArray(input)) fields.refuse('input', 'token ids must be non-negative integers');
    return [input as number[]];
  }
  const inputs: (string | number[])[] = [];
  input.forEach((each: unknown, index) => {
    if (typeof each === 'string' && each.length > 0) inputs.push(each);
    else if (isTokenArray(each) && each.length > 0) inputs.push(each);
    else fields.refuse(`input.${index}`, 'must be a non-empty string or a non-empty array of token ids');
  });
  return inputs;
}

function isTokenArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((each) => typeof each === 'number' && Number.isSafeInteger(each) && each >= 0);
}
