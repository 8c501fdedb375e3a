// Anthropic's Messages request as JSON Schema (TypeBox): the part of it lmgate can serve,
// and the message each refusal gets (`x-message` on the schema that fails). Server tools,
// documents and other block kinds with no chat equivalent are refused by name rather than
// dropped. Compiled once in validate-request.ts, which checks the lists (messages, content
// blocks, text blocks, tools) item by item; the request's types (messages-wire.ts) are
// read off these schemas.
import { Type, type Static, type TObject, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { MESSAGE } from '../chat/request-schema.js';

export { MESSAGE };
/** Schema annotation on a tagged union: the message when `type` names none of its kinds. */
export const TAG_MESSAGE = 'x-tag-message';
/**
 * Schema keyword: a string's length bounds, `[min, max]`, in UTF-16 units as JavaScript
 * counts them (Ajv's minLength and maxLength count code points).
 */
export const UTF16_LENGTH = 'x-utf16-length';

export const ANTHROPIC_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
/** As for chat: far beyond any conversation that fits a context. */
const MAX_MESSAGES = 10_000;
const MAX_MODEL_NAME_CHARS = 256;
const TOOL_NAME_PATTERN = '^[a-zA-Z0-9_-]{1,64}$';

const A_STRING = 'must be a string';
const A_BOOLEAN = 'must be a boolean';
const AN_OBJECT = 'must be an object';
const BLOCK_KINDS = 'must be one of: text, image, tool_use, tool_result, thinking';
const TOOL_CHOICE_TYPES = ['auto', 'any', 'tool', 'none'] as const;

// ---------------------------------------------------------------------------------------
// Schema building blocks

function stringEnum<const V extends readonly string[]>(values: V, message: string): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ type: 'string', enum: values, [MESSAGE]: message });
}

/** Any JSON object, contents unchecked (tool input): never descended into. */
function freeObject(message: string): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', [MESSAGE]: message });
}

/**
 * `not: { not: X }` accepts exactly what X accepts, but fails as one error with one
 * message, and Ajv stops at X's first failure.
 */
function quietly<T extends TSchema>(schema: T, message: string): TUnsafe<Static<T>> {
  return Type.Unsafe<Static<T>>({ not: { not: schema }, [MESSAGE]: message });
}

/** A string, or a list of `item`s, which validate-request.ts checks one by one. */
function stringOrList<T extends TSchema>(_item: T, message: string): TUnsafe<string | Static<T>[]> {
  return Type.Unsafe<string | Static<T>[]>({ type: ['string', 'array'], [MESSAGE]: message });
}

/** A list of `item`s, which validate-request.ts checks one by one, stopping when the report is full. */
function listOf<T extends TSchema>(_item: T, bounds: { minItems?: number; maxItems?: number }, message: string): TUnsafe<Static<T>[]> {
  return Type.Unsafe<Static<T>[]>({ type: 'array', ...bounds, [MESSAGE]: message });
}

/**
 * An object's fields, each checked by its own part of an allOf: Ajv then reports them in
 * the order written, where it would report every missing field before any other.
 */
function fieldsInOrder(properties: TProperties): object {
  const required = new Set(Type.Object(properties).required ?? []);
  const parts = Object.entries(properties).map(([key, schema]) => ({ properties: { [key]: schema }, ...(required.has(key) ? { required: [key] } : {}) }));
  return parts.length === 0 ? {} : { allOf: parts };
}

function inOrder<T extends TProperties>(properties: T, message: string): TUnsafe<Static<TObject<T>>> {
  return Type.Unsafe({ type: 'object', [MESSAGE]: message, ...fieldsInOrder(properties) });
}

interface Tags {
  /** The message when `type` is missing or names no kind. */
  unknown: string;
  /** Kinds refused here by their `type` alone, and why. */
  refused?: Record<string, string>;
}

/**
 * Objects told apart by their `type`: Ajv's discriminator checks only the kind `type`
 * names, so a bad image block gets image-block errors, not every kind's.
 */
function tagged<T extends TObject[]>(kinds: [...T], tags: Tags): TUnsafe<Static<T[number]>> {
  const branches = kinds.map(({ properties: { type, ...fields } }) => ({ properties: { type }, required: ['type'], ...fieldsInOrder(fields) }));
  for (const [tag, message] of Object.entries(tags.refused ?? {})) {
    branches.push({ properties: { type: Type.Unsafe({ const: tag, not: {}, [MESSAGE]: message }) }, required: ['type'] });
  }
  return Type.Unsafe({ type: 'object', [MESSAGE]: AN_OBJECT, [TAG_MESSAGE]: tags.unknown, discriminator: { propertyName: 'type' }, oneOf: branches });
}

// ---------------------------------------------------------------------------------------
// Content blocks

export const TextBlock = Type.Object({ type: Type.Literal('text'), text: Type.String({ [MESSAGE]: A_STRING }) });
/** An item of a list of text blocks (system, a tool's result): each refused as a whole. */
export const TextBlockItem = quietly(TextBlock, 'must be a text block');
const TEXT_BLOCKS = 'must be a string or an array of text blocks';

const ImageSource = tagged(
  [
    Type.Object({
      type: Type.Literal('base64'),
      media_type: stringEnum(ANTHROPIC_IMAGE_TYPES, `must be one of: ${ANTHROPIC_IMAGE_TYPES.join(', ')}`),
      data: Type.String({ [MESSAGE]: A_STRING }),
    }),
    Type.Object({ type: Type.Literal('url'), url: Type.String({ [MESSAGE]: A_STRING }) }),
  ],
  { unknown: 'must be "base64" or "url"' },
);
export const ImageBlock = Type.Object({ type: Type.Literal('image'), source: ImageSource });

export const ToolUseBlock = Type.Object({
  type: Type.Literal('tool_use'),
  id: Type.String({ [MESSAGE]: A_STRING }),
  name: Type.String({ [MESSAGE]: A_STRING }),
  input: freeObject(AN_OBJECT),
});

export const ToolResultBlock = Type.Object({
  type: Type.Literal('tool_result'),
  tool_use_id: Type.String({ [MESSAGE]: A_STRING }),
  is_error: Type.Optional(Type.Boolean({ [MESSAGE]: A_BOOLEAN })),
  // Last, so that its text blocks, checked after the block, are reported in order.
  content: Type.Optional(stringOrList(TextBlock, TEXT_BLOCKS)),
});

// An earlier turn's reasoning, sent back as Anthropic asks: nothing a chat model reads, so
// nothing in it is checked.
export const ThinkingBlock = Type.Object({ type: Type.Literal('thinking') });
export const RedactedThinkingBlock = Type.Object({ type: Type.Literal('redacted_thinking') });

const ASSISTANT_ONLY = 'blocks are only allowed in assistant messages';
const USER_ONLY = 'blocks are only allowed in user messages';

export const UserBlock = tagged([TextBlock, ImageBlock, ToolResultBlock], {
  unknown: BLOCK_KINDS,
  refused: { tool_use: `tool_use ${ASSISTANT_ONLY}`, thinking: `thinking ${ASSISTANT_ONLY}`, redacted_thinking: `thinking ${ASSISTANT_ONLY}` },
});
export const AssistantBlock = tagged([TextBlock, ToolUseBlock, ThinkingBlock, RedactedThinkingBlock], {
  unknown: BLOCK_KINDS,
  refused: { image: `image ${USER_ONLY}`, tool_result: `tool_result ${USER_ONLY}` },
});

// ---------------------------------------------------------------------------------------
// Messages

type TurnOf<AssistantBlocks> =
  | { role: 'user'; content: string | Static<typeof UserBlock>[] }
  | { role: 'assistant'; content: string | AssistantBlocks[] };
/** A turn as a client sends it. */
export type MessageParam = TurnOf<Static<typeof AssistantBlock>>;
/** A turn as lmgate writes one from a chat message: never with thinking, which chat has no place for. */
export type WrittenMessageParam = TurnOf<Exclude<Static<typeof AssistantBlock>, Static<typeof ThinkingBlock> | Static<typeof RedactedThinkingBlock>>>;

/** A message; its content blocks are checked one by one, by its role's schema (UserBlock, AssistantBlock). */
export const Message = Type.Unsafe<MessageParam>(
  inOrder(
    {
      role: stringEnum(['user', 'assistant'], 'must be "user" or "assistant"'),
      content: stringOrList(Type.Unknown(), 'must be a string or an array of content blocks'),
    },
    AN_OBJECT,
  ),
);

// ---------------------------------------------------------------------------------------
// Tools

const ToolFields = {
  name: Type.String({ pattern: TOOL_NAME_PATTERN, [MESSAGE]: 'must be 1 to 64 letters, digits, underscores or dashes' }),
  description: Type.Optional(Type.String({ [MESSAGE]: A_STRING })),
  /** A JSON Schema of an object. */
  input_schema: quietly(
    Type.Unsafe<{ type: 'object'; [keyword: string]: unknown }>({ type: 'object', required: ['type'], properties: { type: { const: 'object' } } }),
    'must be a JSON Schema object with type "object"',
  ),
};

const CustomTool = Type.Object({ type: Type.Optional(Type.Literal('custom')), ...ToolFields });

/** A custom tool; another kind (a server tool) is refused by its type alone. */
export const Tool = Type.Unsafe<Static<typeof CustomTool>>({
  type: 'object',
  [MESSAGE]: AN_OBJECT,
  if: { properties: { type: { const: 'custom' } } },
  then: fieldsInOrder(ToolFields),
  else: { properties: { type: { const: 'custom', [MESSAGE]: 'only custom tools (with an input_schema) are supported' } } },
});

const SerialOption = { disable_parallel_tool_use: Type.Optional(Type.Boolean({ [MESSAGE]: A_BOOLEAN })) };
const ToolChoiceKinds = Type.Union([
  Type.Object({ type: Type.Literal('auto'), ...SerialOption }),
  Type.Object({ type: Type.Literal('any'), ...SerialOption }),
  Type.Object({ type: Type.Literal('tool'), name: Type.String(), ...SerialOption }),
  Type.Object({ type: Type.Literal('none'), ...SerialOption }),
]);
const Named = { required: ['name'], properties: { name: { type: 'string', [MESSAGE]: A_STRING } } };

/** The kinds of ToolChoiceKinds; a "tool" choice without a name is refused for that alone. */
export const ToolChoice = Type.Unsafe<Static<typeof ToolChoiceKinds>>({
  type: 'object',
  [MESSAGE]: AN_OBJECT,
  if: { required: ['type'], properties: { type: { const: 'tool' } }, not: Named },
  then: Named,
  else: fieldsInOrder({ type: stringEnum(TOOL_CHOICE_TYPES, `must be one of: ${TOOL_CHOICE_TYPES.join(', ')}`), ...SerialOption }),
});

// ---------------------------------------------------------------------------------------
// The request

const numberFrom0To1 = { minimum: 0, maximum: 1, [MESSAGE]: 'must be a number from 0 to 1' };

export const AnthropicRequestSchema = Type.Object({
  model: Type.String({ [UTF16_LENGTH]: [1, MAX_MODEL_NAME_CHARS], [MESSAGE]: `must be a string of 1 to ${MAX_MODEL_NAME_CHARS} characters` }),
  /** Required by Anthropic: it has no default output ceiling. */
  max_tokens: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, [MESSAGE]: 'must be an integer of at least 1' }),
  messages: listOf(Message, { minItems: 1, maxItems: MAX_MESSAGES }, `must be an array of 1 to ${MAX_MESSAGES} messages`),
  system: Type.Optional(stringOrList(TextBlock, TEXT_BLOCKS)),
  stop_sequences: Type.Optional(quietly(Type.Array(Type.String()), 'must be an array of strings')),
  temperature: Type.Optional(Type.Number(numberFrom0To1)),
  top_p: Type.Optional(Type.Number(numberFrom0To1)),
  top_k: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, [MESSAGE]: 'must be a non-negative integer' })),
  stream: Type.Optional(Type.Boolean({ [MESSAGE]: A_BOOLEAN })),
  tools: Type.Optional(listOf(Tool, {}, 'must be an array of tools')),
  tool_choice: Type.Optional(ToolChoice),
  metadata: Type.Optional(
    quietly(Type.Object({ user_id: Type.Optional(Type.Union([Type.String(), Type.Null()])) }), 'must be an object with an optional string user_id'),
  ),
});
