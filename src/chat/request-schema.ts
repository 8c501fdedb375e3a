// The OpenAI chat completions request as JSON Schema (TypeBox): every documented field
// with its type and range, and one schema per message role. Compiled once in validate.ts;
// `x-message` annotations carry the message for a union, a pattern or a quiet check.
// The request's TypeScript types (chat-request.ts) are read off these schemas.
import { Type, type Static, type TObject, type TSchema, type TUnsafe } from '@sinclair/typebox';

/**
 * Collections up to this size get one error per bad item. Longer ones are still checked
 * in full up to their documented cap, but get a single error: with `allErrors`, Ajv would
 * otherwise build an error object for every bad item of a 100,000-item array, which takes
 * longer than the request. Past the cap, the cap is the only error.
 */
const ITEMIZED_LIMIT = 256;

/** Messages in one request: far beyond any conversation that fits a context. */
export const MAX_MESSAGES = 10_000;
/** OpenAI's caps on tool calls in one assistant message and on logit_bias entries. */
const MAX_TOOL_CALLS = 128;
const MAX_LOGIT_BIAS_ENTRIES = 300;
/** Model names are looked up, logged and echoed: no catalogue needs longer ones. */
const MAX_MODEL_NAME_CHARS = 256;

/** Schema annotation: the message for a union, a pattern or a quiet check that fails. */
export const MESSAGE = 'x-message';

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
    else: beyondItemized({ items: item }, `contains an invalid ${noun}`, maxItems === undefined ? undefined : { maxItems }),
  });
}

/**
 * The check of a collection longer than ITEMIZED_LIMIT: quiet, and skipped altogether past
 * the documented cap, which then is the one error (and no item is looked at).
 */
function beyondItemized(entries: object, message: string, cap: object | undefined): object {
  const check = quietly(entries, message);
  return cap === undefined ? check : { if: cap, then: check };
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
    else: beyondItemized(entries, `contains an invalid entry (${keyRule})`, maxProperties === undefined ? undefined : { maxProperties }),
  });
}

/**
 * Objects told apart by their `type` field. Ajv's discriminator checks only the branch
 * that `type` names, so a bad image part gets image-part errors, not every part type's.
 */
function tagged<T extends TSchema[]>(...branches: T): TUnsafe<Static<T[number]>> {
  return Type.Unsafe({ type: 'object', oneOf: branches, discriminator: { propertyName: 'type' } });
}

/**
 * The same schema, typed as an object that may carry fields it does not name: they pass
 * through to upstreams, and code may read them (as unknown).
 */
function open<T extends TObject>(schema: T): TUnsafe<Static<T> & { [extra: string]: unknown }> {
  return Type.Unsafe(schema);
}

// ---------------------------------------------------------------------------------------
// The request, as OpenAI documents it. Optional parameters take null where OpenAI's API
// does ("not set"); extra fields are allowed everywhere and kept, for upstreams.

const Identifier = Type.String({
  pattern: IDENTIFIER_PATTERN,
  [MESSAGE]: 'must be 1 to 64 letters, digits, underscores or dashes',
});

const TextPart = open(Type.Object({ type: Type.Literal('text'), text: Type.String() }));
const ImagePart = open(
  Type.Object({
    type: Type.Literal('image_url'),
    image_url: Type.Object({ url: Type.String(), detail: Type.Optional(stringEnum(['auto', 'low', 'high'])) }),
  }),
);
const AudioPart = open(
  Type.Object({
    type: Type.Literal('input_audio'),
    input_audio: Type.Object({ data: Type.String(), format: stringEnum(['wav', 'mp3']) }),
  }),
);
const FilePart = open(
  Type.Object({
    type: Type.Literal('file'),
    file: Type.Object({
      file_data: Type.Optional(Type.String()),
      file_id: Type.Optional(Type.String()),
      filename: Type.Optional(Type.String()),
    }),
  }),
);
const RefusalPart = open(Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() }));

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

/**
 * A field of another role's message. Extra fields pass through to upstreams, but these
 * would be read as what they say (tool calls are counted and billed), so a message that
 * carries one its role cannot have is refused.
 */
function onlyOn(roles: string) {
  return Type.Optional(Type.Unsafe<never>({ not: {}, [MESSAGE]: `is only allowed on ${roles} messages` }));
}
const ASSISTANT_ONLY = { tool_calls: onlyOn('assistant'), function_call: onlyOn('assistant') };
const TOOL_ONLY = { tool_call_id: onlyOn('tool') };

export const SystemMessage = Type.Object({ role: Type.Literal('system'), content: TextContent, name: authorName, ...ASSISTANT_ONLY, ...TOOL_ONLY });
export const DeveloperMessage = Type.Object({ role: Type.Literal('developer'), content: TextContent, name: authorName, ...ASSISTANT_ONLY, ...TOOL_ONLY });
export const UserMessage = Type.Object({ role: Type.Literal('user'), content: UserContent, name: authorName, ...ASSISTANT_ONLY, ...TOOL_ONLY });
// content may be absent when the message carries tool_calls or function_call; that
// cross-field rule is checked in checkAssistantContent.
export const AssistantMessage = Type.Object({
  role: Type.Literal('assistant'),
  content: Type.Optional(AssistantContent),
  name: authorName,
  refusal: Type.Optional(nullable(Type.String())),
  audio: Type.Optional(nullable(Type.Object({ id: Type.String() }))),
  tool_calls: Type.Optional(listOf(ToolCall, { noun: 'tool call', minItems: 1, maxItems: MAX_TOOL_CALLS })),
  function_call: Type.Optional(nullable(Type.Object({ name: Type.String(), arguments: Type.String() }))),
  ...TOOL_ONLY,
});
export const ToolMessage = Type.Object({ role: Type.Literal('tool'), content: TextContent, tool_call_id: Type.String(), ...ASSISTANT_ONLY });
export const FunctionMessage = Type.Object({
  role: Type.Literal('function'),
  content: nullable(Type.String()),
  name: Type.String(),
  ...ASSISTANT_ONLY,
  ...TOOL_ONLY,
});

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

export const ChatRequestSchema = Type.Object({
  model: Type.String({ minLength: 1, maxLength: MAX_MODEL_NAME_CHARS }),
  // Each message is checked by its role's schema in checkMessages, not here.
  // (chat-request.ts types them as ChatMessage[].)
  messages: Type.Unsafe<unknown[]>({ type: 'array', minItems: 1, maxItems: MAX_MESSAGES }),
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
        maxProperties: MAX_LOGIT_BIAS_ENTRIES,
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
      open(Type.Object({ include_usage: Type.Optional(Type.Boolean()), include_obfuscation: Type.Optional(Type.Boolean()) })),
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
