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
// stops at MAX_REPORTED_FIELDS fields.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Type, type Static, type TObject, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { ValidationError } from '../errors.js';
import type { ChatMessage, ChatRequest } from './chat-request.js';

/** A request broken in more places than this gets the first ones reported. */
const MAX_REPORTED_FIELDS = 50;
const MAX_MESSAGES_PER_FIELD = 3;

/**
 * Collections up to this size get one error per bad item. Longer ones are still checked
 * in full, but get a single error: with `allErrors`, Ajv would otherwise build an error
 * object for every bad item of a 100,000-item array, which takes longer than the request.
 */
const ITEMIZED_LIMIT = 256;

/** Schema annotation: the message for a union, a pattern or a quiet check that fails. */
const MESSAGE = 'x-message';

// OpenAI's rule for function and JSON-schema names.
const IDENTIFIER_PATTERN = '^[a-zA-Z0-9_-]{1,64}$';

// ---------------------------------------------------------------------------------------
// Schema building blocks

function nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

function stringEnum<const V extends readonly string[]>(values: V): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ type: 'string', enum: values });
}

/** Any JSON object, contents unchecked (tool parameters, JSON schemas): never descended into. */
const FreeObject = Type.Unsafe<Record<string, unknown>>({ type: 'object' });

/**
 * `not: { not: X }` accepts exactly what X accepts, but Ajv evaluates a `not` without
 * building errors and stops at the first failure.
 */
function quietly(schema: object, message: string): object {
  return { not: { not: schema }, [MESSAGE]: message };
}

interface ListOptions {
  noun: string;
  minItems?: number;
  maxItems?: number;
}

function listOf<T extends TSchema>(item: T, { noun, minItems, maxItems }: ListOptions): TUnsafe<Static<T>[]> {
  const bounds = { ...(minItems === undefined ? {} : { minItems }), ...(maxItems === undefined ? {} : { maxItems }) };
  // A documented cap at or under the limit needs no quiet branch: past it, maxItems fails.
  if (maxItems !== undefined && maxItems <= ITEMIZED_LIMIT) {
    return Type.Unsafe({ type: 'array', ...bounds, if: { maxItems }, then: { items: item } });
  }
  return Type.Unsafe({
    type: 'array',
    ...bounds,
    if: { maxItems: ITEMIZED_LIMIT },
    then: { items: item },
    else: quietly({ items: item }, `contains an invalid ${noun}`),
  });
}

interface MapOptions {
  /** Schema for the keys, and the rule it states, for the message. */
  keys: object;
  keyRule: string;
  maxProperties?: number;
}

function mapOf<T extends TSchema>(value: T, { keys, keyRule, maxProperties }: MapOptions): TUnsafe<Record<string, Static<T>>> {
  const entries = { propertyNames: { ...keys, [MESSAGE]: keyRule }, additionalProperties: value };
  if (maxProperties !== undefined && maxProperties <= ITEMIZED_LIMIT) {
    return Type.Unsafe({ type: 'object', maxProperties, if: { maxProperties }, then: entries });
  }
  return Type.Unsafe({
    type: 'object',
    ...(maxProperties === undefined ? {} : { maxProperties }),
    if: { maxProperties: ITEMIZED_LIMIT },
    then: entries,
    else: quietly(entries, `contains an invalid entry (${keyRule})`),
  });
}

/**
 * Objects told apart by their `type` field. Ajv's discriminator checks only the branch
 * that `type` names, so a bad image part gets image-part errors, not every part type's.
 */
function tagged<T extends TObject[]>(...branches: T): TUnsafe<Static<T[number]>> {
  return Type.Unsafe({ type: 'object', oneOf: branches, discriminator: { propertyName: 'type' } });
}

// ---------------------------------------------------------------------------------------
// The request, as OpenAI documents it. Optional parameters take null where OpenAI's API
// does ("not set"); extra fields are allowed everywhere and kept, for upstreams.

const Identifier = Type.String({
  pattern: IDENTIFIER_PATTERN,
  [MESSAGE]: 'must be 1 to 64 letters, digits, underscores or dashes',
});

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const ImagePart = Type.Object({
  type: Type.Literal('image_url'),
  image_url: Type.Object({ url: Type.String(), detail: Type.Optional(stringEnum(['auto', 'low', 'high'])) }),
});
const AudioPart = Type.Object({
  type: Type.Literal('input_audio'),
  input_audio: Type.Object({ data: Type.String(), format: stringEnum(['wav', 'mp3']) }),
});
const FilePart = Type.Object({
  type: Type.Literal('file'),
  file: Type.Object({
    file_data: Type.Optional(Type.String()),
    file_id: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
  }),
});
const RefusalPart = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() });

const PARTS = { noun: 'content part', minItems: 1 };
const TextContent = Type.Union([Type.String(), listOf(tagged(TextPart), PARTS)], {
  [MESSAGE]: 'must be a string or an array of content parts',
});
const UserContent = Type.Union(
  [Type.String(), listOf(tagged(TextPart, ImagePart, AudioPart, FilePart), PARTS)],
  { [MESSAGE]: 'must be a string or an array of content parts' },
);
const AssistantContent = Type.Union([Type.String(), listOf(tagged(TextPart, RefusalPart), PARTS), Type.Null()], {
  [MESSAGE]: 'must be a string, an array of content parts or null',
});

const ToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});

const authorName = Type.Optional(Type.String());

const SystemMessage = Type.Object({ role: Type.Literal('system'), content: TextContent, name: authorName });
const DeveloperMessage = Type.Object({ role: Type.Literal('developer'), content: TextContent, name: authorName });
const UserMessage = Type.Object({ role: Type.Literal('user'), content: UserContent, name: authorName });
// content may be absent when the message carries tool_calls or function_call; that
// cross-field rule is checked in checkAssistantContent.
const AssistantMessage = Type.Object({
  role: Type.Literal('assistant'),
  content: Type.Optional(AssistantContent),
  name: authorName,
  refusal: Type.Optional(nullable(Type.String())),
  audio: Type.Optional(nullable(Type.Object({ id: Type.String() }))),
  tool_calls: Type.Optional(listOf(ToolCall, { noun: 'tool call', minItems: 1 })),
  function_call: Type.Optional(nullable(Type.Object({ name: Type.String(), arguments: Type.String() }))),
});
const ToolMessage = Type.Object({ role: Type.Literal('tool'), content: TextContent, tool_call_id: Type.String() });
const FunctionMessage = Type.Object({ role: Type.Literal('function'), content: nullable(Type.String()), name: Type.String() });

const FunctionDefinition = Type.Object({
  name: Identifier,
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(FreeObject),
  strict: Type.Optional(nullable(Type.Boolean())),
});

const Tool = Type.Object({ type: Type.Literal('function'), function: FunctionDefinition });

const ResponseFormat = tagged(
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({
    type: Type.Literal('json_schema'),
    json_schema: Type.Object({
      name: Identifier,
      description: Type.Optional(Type.String()),
      schema: Type.Optional(FreeObject),
      strict: Type.Optional(nullable(Type.Boolean())),
    }),
  }),
);

const Penalty = Type.Optional(nullable(Type.Number({ minimum: -2, maximum: 2 })));
const TokenCount = Type.Optional(nullable(Type.Integer({ minimum: 1 })));
const Flag = Type.Optional(nullable(Type.Boolean()));

const ChatRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  // Each message is checked by its role's schema in checkMessages, not here.
  messages: Type.Unsafe<ChatMessage[]>({ type: 'array', minItems: 1 }),
  audio: Type.Optional(
    nullable(
      Type.Object({
        format: stringEnum(['wav', 'aac', 'mp3', 'flac', 'opus', 'pcm16']),
        voice: Type.Union([Type.String(), Type.Object({ id: Type.String() })], {
          [MESSAGE]: 'must be a voice name or an object with an id',
        }),
      }),
    ),
  ),
  frequency_penalty: Penalty,
  function_call: Type.Optional(
    Type.Union([stringEnum(['none', 'auto']), Type.Object({ name: Type.String() })], {
      [MESSAGE]: 'must be "none", "auto" or an object naming a function',
    }),
  ),
  functions: Type.Optional(
    listOf(
      Type.Object({ name: Identifier, description: Type.Optional(Type.String()), parameters: Type.Optional(FreeObject) }),
      { noun: 'function', minItems: 1, maxItems: 128 },
    ),
  ),
  logit_bias: Type.Optional(
    nullable(
      mapOf(Type.Number({ minimum: -100, maximum: 100 }), {
        keys: { pattern: '^[0-9]+$' },
        keyRule: 'keys must be token ids (strings of digits)',
      }),
    ),
  ),
  logprobs: Flag,
  max_completion_tokens: TokenCount,
  max_tokens: TokenCount,
  metadata: Type.Optional(
    nullable(
      mapOf(Type.String({ maxLength: 512 }), {
        keys: { maxLength: 64 },
        keyRule: 'keys must be at most 64 characters long',
        maxProperties: 16,
      }),
    ),
  ),
  modalities: Type.Optional(nullable(listOf(stringEnum(['text', 'audio']), { noun: 'modality' }))),
  n: Type.Optional(nullable(Type.Integer({ minimum: 1, maximum: 128 }))),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  prediction: Type.Optional(nullable(Type.Object({ type: Type.Literal('content'), content: TextContent }))),
  presence_penalty: Penalty,
  prompt_cache_key: Type.Optional(nullable(Type.String())),
  reasoning_effort: Type.Optional(
    nullable(stringEnum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
  ),
  response_format: Type.Optional(ResponseFormat),
  safety_identifier: Type.Optional(nullable(Type.String({ maxLength: 64 }))),
  seed: Type.Optional(nullable(Type.Integer())),
  service_tier: Type.Optional(nullable(stringEnum(['auto', 'default', 'flex', 'scale', 'priority']))),
  stop: Type.Optional(
    Type.Union([Type.String(), listOf(Type.String(), { noun: 'stop sequence', maxItems: 4 }), Type.Null()], {
      [MESSAGE]: 'must be a string, an array of up to 4 strings or null',
    }),
  ),
  store: Flag,
  stream: Flag,
  stream_options: Type.Optional(
    nullable(
      Type.Object({ include_usage: Type.Optional(Type.Boolean()), include_obfuscation: Type.Optional(Type.Boolean()) }),
    ),
  ),
  temperature: Type.Optional(nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  tool_choice: Type.Optional(
    Type.Union(
      [
        stringEnum(['none', 'auto', 'required']),
        Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String() }) }),
      ],
      { [MESSAGE]: 'must be "none", "auto", "required" or an object naming a function' },
    ),
  ),
  tools: Type.Optional(listOf(Tool, { noun: 'tool', minItems: 1, maxItems: 128 })),
  top_logprobs: Type.Optional(nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
  top_p: Type.Optional(nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  user: Type.Optional(Type.String()),
  verbosity: Type.Optional(nullable(stringEnum(['low', 'medium', 'high']))),
  web_search_options: Type.Optional(
    Type.Object({
      search_context_size: Type.Optional(stringEnum(['low', 'medium', 'high'])),
      user_location: Type.Optional(
        nullable(
          Type.Object({
            type: Type.Literal('approximate'),
            approximate: Type.Object({
              city: Type.Optional(Type.String()),
              country: Type.Optional(Type.String()),
              region: Type.Optional(Type.String()),
              timezone: Type.Optional(Type.String()),
            }),
          }),
        ),
      ),
    }),
  ),
});

// Compile-time proof that whatever these schemas accept is what the rest of lmgate reads
// as a ChatRequest: changing either side so they disagree breaks the build here.
type Holds<T extends true> = T;
type AssistantAsRead = Omit<Static<typeof AssistantMessage>, 'content'> & {
  content: Exclude<Static<typeof AssistantMessage>['content'], undefined>;
};
type SchemaFitsChatRequest = Holds<
  Static<typeof ChatRequestSchema> extends ChatRequest
    ? Static<
        | typeof SystemMessage
        | typeof DeveloperMessage
        | typeof UserMessage
        | typeof ToolMessage
        | typeof FunctionMessage
      > extends ChatMessage
      ? AssistantAsRead extends ChatMessage
        ? true
        : false
      : false
    : false
>;

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
  if (Array.isArray(body.messages)) checkMessages(body.messages, errors);

  if (errors.size > 0) throw new ValidationError(errors.toRecord());
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

/** The 422 `errors` map under construction, bounded in fields and messages per field. */
class FieldErrors {
  private readonly fields = new Map<string, string[]>();

  get size(): number {
    return this.fields.size;
  }

  get isFull(): boolean {
    return this.fields.size >= MAX_REPORTED_FIELDS;
  }

  has(path: string): boolean {
    return this.fields.has(path);
  }

  add(path: string, message: string): void {
    const messages = this.fields.get(path);
    if (messages === undefined) {
      if (!this.isFull) this.fields.set(path, [message]);
    } else if (messages.length < MAX_MESSAGES_PER_FIELD && !messages.includes(message)) {
      messages.push(message);
    }
  }

  toRecord(): Record<string, string[]> {
    // fromEntries defines own properties, so a path such as "__proto__" stays a key.
    return Object.fromEntries(this.fields);
  }
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

/** `/messages/0/content` (a JSON Pointer) → `messages.0.content`. */
function dottedPath(instancePath: string): string {
  if (instancePath === '') return '';
  return instancePath
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}

function joinPath(base: string, child: string): string {
  if (base === '') return child;
  return child === '' ? base : `${base}.${child}`;
}

function parentOf(schemaPath: string): string {
  return schemaPath.slice(0, schemaPath.lastIndexOf('/'));
}
