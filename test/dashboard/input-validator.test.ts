import { Type, type TSchema } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { MESSAGES, TRIM, compileInputSchema } from '../../src/validation/input-validator.js';
import { ValidationError } from '../../src/errors.js';
import { Nullable } from '../../src/http/typebox.js';

type Outcome = { value: unknown } | { error: unknown };

function checker(schema: TSchema, httpPart: 'body' | 'querystring' = 'body'): (input: unknown) => Outcome {
  return compileInputSchema({ schema, httpPart, method: 'POST', url: '/test' }) as (input: unknown) => Outcome;
}

/** The fields of the ValidationError an input is refused with. */
function refusal(outcome: Outcome): Record<string, string[]> {
  if (!('error' in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(ValidationError);
  return (outcome.error as ValidationError).fields;
}

const SignUp = Type.Object({
  email: Type.String({ [TRIM]: true, maxLength: 20, pattern: '@', [MESSAGES]: { pattern: 'Enter a valid email address.' } }),
  password: Type.String({ minLength: 10, maxLength: 200 }),
  name: Type.Optional(Nullable(Type.String({ [TRIM]: true, minLength: 1 }))),
});

describe('the dashboard input validator', () => {
  it('names every problem by its field, in the annotated words or the default ones', () => {
    expect(refusal(checker(SignUp)({ email: 'nobody', password: 'short', name: 5 }))).toEqual({
      email: ['Enter a valid email address.'],
      password: ['Use at least 10 characters.'],
      name: ['Must be a string or null.'],
    });
    expect(refusal(checker(SignUp)({ email: `${'x'.repeat(20)}@`, password: 'p'.repeat(201) }))).toEqual({
      email: ['Use at most 20 characters.'],
      password: ['Use at most 200 characters.'],
    });
  });

  it('reads no body, and a null one, as an object with every required field missing', () => {
    const missing = { email: ['This field is required.'], password: ['This field is required.'] };
    expect(refusal(checker(SignUp)(undefined))).toEqual(missing);
    expect(refusal(checker(SignUp)(null))).toEqual(missing);
    expect(refusal(checker(SignUp)([]))).toEqual({ body: ['Must be a JSON object.'] });
  });

  it('trims marked strings before checking them, and hands them on trimmed', () => {
    const body = { email: '  ada@example.test  ', password: '  ten chars  ', name: '  Ada ' };
    expect(checker(SignUp)(body)).toEqual({ value: { email: 'ada@example.test', password: '  ten chars  ', name: 'Ada' } });
    expect(refusal(checker(SignUp)({ email: 'a@b', password: 'long enough', name: '   ' }))).toEqual({ name: ['Must not be empty.'] });
    expect(checker(SignUp)({ email: 'a@b', password: 'long enough', name: null })).toEqual({
      value: { email: 'a@b', password: 'long enough', name: null },
    });
  });

  it('reads a query string as text, with defaults, and a JSON body as the types it has', () => {
    const Query = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) });
    expect(checker(Query, 'querystring')({ limit: '20' })).toEqual({ value: { limit: 20 } });
    expect(checker(Query, 'querystring')({})).toEqual({ value: { limit: 50 } });
    expect(refusal(checker(Query, 'querystring')({ limit: '1.5' }))).toEqual({ limit: ['Must be a whole number.'] });
    expect(refusal(checker(Query, 'querystring')({ limit: ['1', '2'] }))).toEqual({ limit: ['Must be a whole number.'] });
    expect(refusal(checker(Query, 'querystring')({ limit: '501' }))).toEqual({ limit: ['Must be at most 500.'] });
    expect(refusal(checker(Query)({ limit: '20' }))).toEqual({ limit: ['Must be a whole number.'] });
  });

  it('counts a length in characters, as JSON Schema does: an emoji is one', () => {
    expect(checker(SignUp)({ email: 'a@b', password: '🔑'.repeat(10) })).toHaveProperty('value');
    expect(refusal(checker(SignUp)({ email: 'a@b', password: '🔑'.repeat(9) }))).toEqual({ password: ['Use at least 10 characters.'] });
  });
});
