// The dashboard's request bodies, query strings and path parameters are TypeBox schemas on
// its routes; Fastify checks them with this compiler before a handler runs. A refusal is a
// ValidationError (422): one entry per problem, named by its field, in words meant for
// the person at the form.
import { Ajv, type ErrorObject } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { ValidationError } from '../errors.js';

/** Schema keyword: the string is trimmed before it is checked, and kept trimmed. */
export const TRIM = 'x-trim';
/** Schema annotation: a message per failing keyword, where the default would not say it. */
export const MESSAGES = 'x-messages';

function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true, // every problem, not just the first
    verbose: true, // errors carry their schema, where the messages are
    messages: false, // written below; don't build Ajv's
    strict: true, // a schema mistake fails at startup, not quietly per request
    allowUnionTypes: true, // Nullable's type: [T, 'null']
    coerceTypes,
    useDefaults: true,
  });
  ajv.addKeyword({
    keyword: TRIM,
    type: 'string',
    schemaType: 'boolean',
    modifying: true,
    // Before the length and pattern checks, which are about the trimmed text.
    before: 'maxLength',
    validate: (enabled: boolean, text: string, _schema, place) => {
      if (enabled && place) place.parentData[place.parentDataProperty] = text.trim();
      return true;
    },
  });
  ajv.addKeyword(MESSAGES);
  return ajv;
}

// A query string is text: `limit=50` means the number. A JSON body says what it means:
// "50" is not a number there.
const bodyAjv = createAjv(false);
const urlAjv = createAjv(true);

export const compileInputSchema: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const check = (httpPart === 'body' ? bodyAjv : urlAjv).compile(schema as object);
  return (input: unknown) => {
    // No body is an object with nothing filled in: each required field says it is missing.
    const data = input ?? {};
    return check(data) ? { value: data } : { error: new ValidationError(fieldsOf(check.errors ?? [])) };
  };
};

function fieldsOf(errors: readonly ErrorObject[]): Record<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const error of errors) {
    const params: Record<string, unknown> = error.params;
    const path = error.instancePath.slice(1).replaceAll('/', '.');
    const missing = error.keyword === 'required' ? String(params.missingProperty) : '';
    const field = [path, missing].filter((part) => part !== '').join('.') || 'body';
    const messages = fields.get(field) ?? [];
    messages.push(messageFor(error, params));
    fields.set(field, messages);
  }
  // fromEntries defines own properties, so a field named "__proto__" stays a key.
  return Object.fromEntries(fields);
}

function messageFor(error: ErrorObject, params: Record<string, unknown>): string {
  const annotated: unknown = error.parentSchema?.[MESSAGES]?.[error.keyword];
  if (typeof annotated === 'string') return annotated;
  switch (error.keyword) {
    case 'required':
      return 'This field is required.';
    case 'type':
      return `Must be ${[params.type].flat().map(typeNoun).join(' or ')}.`;
    case 'minLength':
      return params.limit === 1 ? 'Must not be empty.' : `Use at least ${String(params.limit)} characters.`;
    case 'maxLength':
      return `Use at most ${String(params.limit)} characters.`;
    case 'minimum':
      return `Must be at least ${String(params.limit)}.`;
    case 'maximum':
      return `Must be at most ${String(params.limit)}.`;
    default:
      return 'Is not valid.';
  }
}

function typeNoun(type: unknown): string {
  switch (type) {
    case 'integer':
      return 'a whole number';
    case 'object':
      return 'a JSON object';
    case 'array':
      return 'a list';
    case 'null':
      return 'null';
    default:
      return `a ${String(type)}`;
  }
}
