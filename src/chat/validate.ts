// Checks a chat completions body field by field: the spec's 422 carries one `errors`
// entry per invalid field (spec 7, rule 2), keyed by its dotted path (`messages.2.content`).
//
// The request is described once as JSON Schema (TypeBox) and compiled once, at module
// load, by Ajv. Messages are not one big union: each is checked by the schema of its own
// role, so a bad message gets that role's rule ("The content field is required.") rather
// than a failure report from every role it is not.
//
// Hostile bodies stay cheap. No schema here descends into free-form values (extra fields,
// tool parameters, JSON schemas), so nesting depth costs nothing; long collections are
// checked item by item only up to ITEMIZED_LIMIT and quietly beyond it; and the report
// stops at 50 fields (validation/field-errors.ts).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ValidationError } from '../errors.js';
import { dottedPath, FieldErrors, joinPath } from '../validation/field-errors.js';
import type { ChatRequest } from './chat-request.js';
import {
  AssistantMessage,
  ChatRequestSchema,
  DeveloperMessage,
  FunctionMessage,
  MAX_MESSAGES,
  MESSAGE,
  SystemMessage,
  ToolMessage,
  UserMessage,
} from './request-schema.js';


// ---------------------------------------------------------------------------------------
// Compiled once, here. The body is forwarded to upstreams as the client sent it, so
// nothing is coerced, removed or defaulted.

const ajv = new Ajv({
  allErrors: true, // one entry per invalid field, not just the first
  verbose: true, // errors carry their schema, where the x-message annotations are
  messages: false, // messages are written below; don't build Ajv's
  discriminator: true,
  strict: true, // a schema mistake fails at startup, not quietly per request
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
});
ajv.addKeyword(MESSAGE);

const checkRequest = ajv.compile(ChatRequestSchema);

const checkMessageOfRole = new Map<string, ValidateFunction>([
  ['system', ajv.compile(SystemMessage)],
  ['developer', ajv.compile(DeveloperMessage)],
  ['user', ajv.compile(UserMessage)],
  ['assistant', ajv.compile(AssistantMessage)],
  ['tool', ajv.compile(ToolMessage)],
  ['function', ajv.compile(FunctionMessage)],
]);
const UNKNOWN_ROLE = `must be one of: ${[...checkMessageOfRole.keys()].join(', ')}`;

// ---------------------------------------------------------------------------------------

/**
 * Returns the body as a ChatRequest, or throws ValidationError whose `fields` map each
 * invalid field's dotted path (`model`, `messages.0.content`, `tools.1.function.name`;
 * `body` when the body is not an object) to its messages.
 *
 * The body is returned as it came, extra fields included, with one normalisation: an
 * assistant message without `content` gets `content: null`, which OpenAI treats the same.
 */
export function validateChatRequest(body: unknown): ChatRequest {
  if (!isJsonObject(body)) throw new ValidationError({ body: ['must be a JSON object'] });

  const errors = new FieldErrors();
  if (!checkRequest(body)) reportSchemaErrors(checkRequest.errors ?? [], '', errors);
  checkParameterPairs(body, errors);
  // Past the cap, the cap is the one error: no message is looked at.
  if (Array.isArray(body.messages) && body.messages.length <= MAX_MESSAGES) checkMessages(body.messages, errors);

  errors.check();
  // The top-level schema passed, and so did each message against its role's schema.
  return body as ChatRequest;
}

function checkMessages(messages: unknown[], errors: FieldErrors): void {
  for (let i = 0; i < messages.length && !errors.isFull; i++) {
    const message = messages[i];
    if (!isJsonObject(message)) {
      errors.add(`messages.${i}`, 'must be an object');
      continue;
    }
    const role = message.role;
    // A Map, not an object lookup: a role of "constructor" or "__proto__" must not
    // find anything.
    const check = typeof role === 'string' ? checkMessageOfRole.get(role) : undefined;
    if (check === undefined) {
      errors.add(`messages.${i}.role`, role === undefined ? requiredMessage('role') : UNKNOWN_ROLE);
      continue;
    }
    if (!check(message)) reportSchemaErrors(check.errors ?? [], `messages.${i}`, errors);
    if (role === 'assistant') checkAssistantContent(message, i, errors);
  }
}

// OpenAI: an assistant message's content is "required unless tool_calls or function_call
// is specified".
function checkAssistantContent(message: Record<string, unknown>, index: number, errors: FieldErrors): void {
  if (message.content != null) return;
  if (message.tool_calls == null && message.function_call == null) {
    errors.add(`messages.${index}.content`, 'The content field is required unless tool_calls or function_call is given.');
  } else if (message.content === undefined) {
    message.content = null;
  }
}

// Rules between two parameters, which OpenAI reports on the dependent one.
function checkParameterPairs(body: Record<string, unknown>, errors: FieldErrors): void {
  if (body.stream_options != null && body.stream !== true && !errors.has('stream_options')) {
    errors.add('stream_options', 'is only allowed when stream is true');
  }
  if (body.top_logprobs != null && body.logprobs !== true && !errors.has('top_logprobs')) {
    errors.add('top_logprobs', 'is only allowed when logprobs is true');
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------
// Ajv errors → field paths and messages

function reportSchemaErrors(ajvErrors: readonly ErrorObject[], basePath: string, errors: FieldErrors): void {
  const relevant = pickUnionBranches(ajvErrors);
  // A value of the wrong type also fails its const/enum; the type error says it better.
  const typeFailedAt = new Set<string>();
  for (const error of relevant) if (error.keyword === 'type') typeFailedAt.add(parentOf(error.schemaPath));

  for (const error of relevant) {
    if (errors.isFull) return;
    const found = describe(error, typeFailedAt);
    if (found === undefined) continue;
    const path = joinPath(basePath, joinPath(dottedPath(error.instancePath), found.child ?? ''));
    errors.add(path === '' ? 'body' : path, found.message);
  }
}

interface Described {
  message: string;
  /** The field under the error's own path that the message is about (a missing one). */
  child?: string;
}

function describe(error: ErrorObject, typeFailedAt: ReadonlySet<string>): Described | undefined {
  const params: Record<string, unknown> = error.params;
  // Errors about an object's keys come twice: once from the key's own rule and once
  // as `propertyNames`; only the latter is reported.
  if (error.propertyName !== undefined) return undefined;
  switch (error.keyword) {
    case 'required':
      return { child: String(params.missingProperty), message: requiredMessage(String(params.missingProperty)) };
    case 'type':
      return { message: `must be ${typeNoun(String(params.type))}` };
    case 'const':
      if (typeFailedAt.has(parentOf(error.schemaPath))) return undefined;
      return { message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'enum':
      if (typeFailedAt.has(parentOf(error.schemaPath))) return undefined;
      return { message: `must be one of: ${listed(params.allowedValues)}` };
    case 'minimum':
      return { message: `must be >= ${String(params.limit)}` };
    case 'maximum':
      return { message: `must be <= ${String(params.limit)}` };
    case 'exclusiveMinimum':
      return { message: `must be > ${String(params.limit)}` };
    case 'exclusiveMaximum':
      return { message: `must be < ${String(params.limit)}` };
    case 'minLength':
      return { message: params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters long` };
    case 'maxLength':
      return { message: `must be at most ${String(params.limit)} characters long` };
    case 'minItems':
      return { message: params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} items` };
    case 'maxItems':
      return { message: `must have at most ${String(params.limit)} items` };
    case 'maxProperties':
      return { message: `must have at most ${String(params.limit)} entries` };
    case 'pattern':
      return { message: annotation(error.parentSchema) ?? `must match the pattern ${String(params.pattern)}` };
    case 'propertyNames':
      return {
        message: `has an invalid key ${quoted(String(params.propertyName))}: ${annotation(error.schema) ?? 'not allowed'}`,
      };
    case 'discriminator':
      return describeTag(error, params);
    case 'anyOf':
      return { message: annotation(error.parentSchema) ?? `must be ${describeUnion(error.schema)}` };
    case 'not':
      return { message: annotation(error.parentSchema) ?? 'is invalid' };
    case 'if':
      return undefined; // its `then`/`else` errors say what is wrong
    default:
      return { message: 'is invalid' };
  }
}

function describeTag(error: ErrorObject, params: Record<string, unknown>): Described {
  const tag = String(params.tag);
  if (params.error === 'tag') {
    return { child: tag, message: params.tagValue === undefined ? requiredMessage(tag) : 'must be a string' };
  }
  const branches: unknown = isJsonObject(error.parentSchema) ? error.parentSchema.oneOf : undefined;
  const tags = Array.isArray(branches) ? branches.map((branch) => tagOf(branch, tag)) : [];
  return { child: tag, message: `must be one of: ${tags.join(', ')}` };
}

function tagOf(branch: unknown, tag: string): string {
  if (!isJsonObject(branch) || !isJsonObject(branch.properties)) return '?';
  const property = branch.properties[tag];
  return isJsonObject(property) ? String(property.const) : '?';
}

/**
 * A failed union (anyOf) comes with the failures of every branch. Keep those of the one
 * branch whose JSON type fits the value (`stop: [1]` is a bad array, not a bad string;
 * `n: 1.5` is a bad integer, not a bad null); when none fits, keep only the union's own
 * error, so the field gets one message instead of one per branch.
 */
function pickUnionBranches(errors: readonly ErrorObject[]): readonly ErrorObject[] {
  const unions = errors.filter((error) => error.keyword === 'anyOf');
  if (unions.length === 0) return errors;
  const outermost = unions.filter(
    (union) => !unions.some((other) => other !== union && union.schemaPath.startsWith(`${other.schemaPath}/`)),
  );

  let result = errors;
  for (const union of outermost) {
    const prefix = `${union.schemaPath}/`;
    const fitting = fittingBranch(union);
    const branchPrefix = fitting === undefined ? undefined : `${prefix}${fitting}/`;
    const branchErrors = result.filter((error) => branchPrefix !== undefined && error.schemaPath.startsWith(branchPrefix));
    const replacement = branchErrors.length > 0 ? pickUnionBranches(branchErrors) : [union];
    const next: ErrorObject[] = [];
    for (const error of result) {
      if (error === union) next.push(...replacement);
      else if (!error.schemaPath.startsWith(prefix)) next.push(error);
    }
    result = next;
  }
  return result;
}

/** The index of the only branch of a failed union whose type is the value's JSON type. */
function fittingBranch(union: ErrorObject): number | undefined {
  const branches: unknown = union.schema;
  if (!Array.isArray(branches)) return undefined;
  const type = jsonTypeOf(union.data);
  let found: number | undefined;
  for (let i = 0; i < branches.length; i++) {
    const branch: unknown = branches[i];
    const declared = isJsonObject(branch) ? branch.type : undefined;
    if (declared === type || (declared === 'integer' && type === 'number')) {
      if (found !== undefined) return undefined;
      found = i;
    }
  }
  return found;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function describeUnion(branches: unknown): string {
  if (!Array.isArray(branches)) return 'valid';
  const nouns = branches.map((branch) => {
    if (!isJsonObject(branch)) return 'valid';
    if (Array.isArray(branch.enum)) return `one of: ${listed(branch.enum)}`;
    return typeNoun(String(branch.type));
  });
  return nouns.length <= 1 ? (nouns[0] ?? 'valid') : `${nouns.slice(0, -1).join(', ')} or ${nouns.at(-1) ?? ''}`;
}

function typeNoun(type: string): string {
  if (type === 'null') return 'null';
  if (type === 'object' || type === 'array' || type === 'integer') return `an ${type}`;
  return `a ${type}`;
}

function requiredMessage(field: string): string {
  return `The ${field} field is required.`;
}

function annotation(schema: unknown): string | undefined {
  const message = isJsonObject(schema) ? schema[MESSAGE] : undefined;
  return typeof message === 'string' ? message : undefined;
}

function listed(values: unknown): string {
  return Array.isArray(values) ? values.map(String).join(', ') : '';
}

/** A client-chosen key, quoted and cut short so it cannot flood the response. */
function quoted(key: string): string {
  return JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key);
}

function parentOf(schemaPath: string): string {
  return schemaPath.slice(0, schemaPath.lastIndexOf('/'));
}
