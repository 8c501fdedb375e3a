// Reading a JSON request body field by field, for the endpoints whose bodies are small
// (completions, responses, embeddings): each refusal is one entry of the 422 `errors` map,
// named by its field, all of them reported at once.
import { ValidationError } from '../errors.js';
import type { MaybePromise } from '../maybe-promise.js';

/** OpenAI's bound on a model name, as the chat request's schema has it. */
const MAX_MODEL_CHARS = 256;

export class BodyFields {
  private readonly problems = new Map<string, string[]>();

  private constructor(readonly body: Record<string, unknown>) {}

  /** The body's fields, or 422 on `body` when it is not a JSON object. */
  static of(body: unknown): BodyFields {
    if (!isJsonObject(body)) throw new ValidationError({ body: ['must be a JSON object'] });
    return new BodyFields(body);
  }

  refuse(field: string, message: string): void {
    const messages = this.problems.get(field);
    if (messages === undefined) this.problems.set(field, [message]);
    else if (!messages.includes(message)) messages.push(message);
  }

  /** Runs another validation, keeping its refusals with these; its result when it passed. */
  alsoCheck<T>(validate: () => T): T | undefined {
    try {
      return validate();
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      for (const [field, messages] of Object.entries(err.fields)) for (const message of messages) this.refuse(field, message);
      return undefined;
    }
  }

  /** Throws the 422 when any field was refused. */
  check(): void {
    // fromEntries defines own properties, so a field named "__proto__" stays a key.
    if (this.problems.size > 0) throw new ValidationError(Object.fromEntries(this.problems));
  }

  model(): string {
    const model = this.body.model;
    if (model === undefined) this.refuse('model', 'is required');
    else if (typeof model !== 'string' || model.length === 0) this.refuse('model', 'must be a non-empty string');
    else if (model.length > MAX_MODEL_CHARS) this.refuse('model', `must be at most ${MAX_MODEL_CHARS} characters`);
    else return model;
    return '';
  }

  boolean(field: string): boolean | undefined {
    const value = this.body[field];
    if (value == null) return undefined;
    if (typeof value === 'boolean') return value;
    this.refuse(field, 'must be a boolean');
    return undefined;
  }

  string(field: string): string | undefined {
    const value = this.body[field];
    if (value == null) return undefined;
    if (typeof value === 'string') return value;
    this.refuse(field, 'must be a string');
    return undefined;
  }

  integer(field: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const value = this.body[field];
    if (value == null) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value)) this.refuse(field, 'must be an integer');
    else if (value < min) this.refuse(field, `must be >= ${min}`);
    else if (value > max) this.refuse(field, `must be <= ${max}`);
    else return value;
    return undefined;
  }

  number(field: string, min: number, max: number): number | undefined {
    const value = this.body[field];
    if (value == null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) this.refuse(field, 'must be a number');
    else if (value < min) this.refuse(field, `must be >= ${min}`);
    else if (value > max) this.refuse(field, `must be <= ${max}`);
    else return value;
    return undefined;
  }

  /** A field this endpoint does not offer, refused when set (null counts as unset). */
  unsupported(field: string, why: string): void {
    if (this.body[field] != null) this.refuse(field, why);
  }
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `run()`, with the fields of a 422 it throws (or rejects with) renamed: a check made on
 * the chat request an endpoint was translated to names the endpoint's own fields.
 */
export function withFieldNames<T>(names: Record<string, string>, run: () => MaybePromise<T>): MaybePromise<T> {
  const rename = (err: unknown): never => {
    if (!(err instanceof ValidationError)) throw err;
    throw new ValidationError(Object.fromEntries(Object.entries(err.fields).map(([field, messages]) => [names[field] ?? field, messages])));
  };
  try {
    const result = run();
    return result instanceof Promise ? result.catch(rename) : result;
  } catch (err) {
    return rename(err);
  }
}
