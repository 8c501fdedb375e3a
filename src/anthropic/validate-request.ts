// Checks a Messages request body field by field, as Anthropic documents it: a 422 names
// each invalid field by its dotted path (`messages.1.content.0.type`), like the chat
// route's, with the message its schema gives (request-schema.ts).
//
// The schemas are compiled once, here. Lists are checked item by item (each message, each
// of its blocks by its role's schema, each text block, each tool), in the order of the
// request's fields, and checking stops once the report is full: a body broken in every
// one of a million blocks costs no more than one broken in 50.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ValidationError } from '../errors.js';
import { FieldErrors, dottedPath, joinPath } from '../validation/field-errors.js';
import { isJsonObject } from '../validation/body-fields.js';
import type { AnthropicRequest } from './messages-wire.js';
import { AnthropicRequestSchema, AssistantBlock, MESSAGE, Message, TAG_MESSAGE, TextBlockItem, Tool, UserBlock, UTF16_LENGTH } from './request-schema.js';

const ajv = new Ajv({
  allErrors: true, // one entry per invalid field, not just the first
  verbose: true, // errors carry their schema, where the x-message annotations are
  messages: false, // the schemas carry the messages; don't build Ajv's
  discriminator: true,
  strict: true, // a schema mistake fails at startup, not quietly per request
  allowUnionTypes: true, // a string or a list
  coerceTypes: false,
  useDefaults: false,
});
ajv.addKeyword(MESSAGE);
ajv.addKeyword(TAG_MESSAGE);
ajv.addKeyword({
  keyword: UTF16_LENGTH,
  type: 'string',
  schemaType: 'array',
  validate: ([min, max]: [number, number], text: string) => text.length >= min && text.length <= max,
});

const checkRequest = ajv.compile(AnthropicRequestSchema);
const checkMessage = ajv.compile(Message);
const checkUserBlock = ajv.compile(UserBlock);
const checkAssistantBlock = ajv.compile(AssistantBlock);
const checkTextBlock = ajv.compile(TextBlockItem);
const checkTool = ajv.compile(Tool);

type RequestField = keyof typeof AnthropicRequestSchema.properties;
/** The request's fields in the order they are reported. */
const REQUEST_FIELDS = Object.keys(AnthropicRequestSchema.properties) as RequestField[];

/** The items of the request's lists, checked once the list itself passed. */
const LIST_ITEMS: Partial<Record<RequestField, (list: unknown[], errors: FieldErrors) => void>> = {
  messages: checkMessages,
  system: (blocks, errors) => checkEach(checkTextBlock, blocks, 'system', errors),
  tools: (tools, errors) => checkEach(checkTool, tools, 'tools', errors),
};

/** The body as an AnthropicRequest, or ValidationError with every invalid field. */
export function validateMessagesRequest(body: unknown): AnthropicRequest {
  if (!isJsonObject(body)) throw new ValidationError({ body: ['must be a JSON object'] });
  const errors = new FieldErrors();
  const refused = checkRequest(body) ? new Map<string, Refusal[]>() : byRequestField(refusalsOf(checkRequest.errors ?? [], ''));
  for (const field of REQUEST_FIELDS) {
    const refusals = refused.get(field);
    const value = body[field];
    if (refusals !== undefined) report(refusals, errors);
    else if (Array.isArray(value)) LIST_ITEMS[field]?.(value, errors);
  }
  errors.check();
  // The request's schema passed, and so did every item of its lists.
  return body as AnthropicRequest;
}

function checkMessages(messages: unknown[], errors: FieldErrors): void {
  for (let i = 0; i < messages.length && !errors.isFull; i++) {
    const message = messages[i];
    const path = `messages.${i}`;
    check(checkMessage, message, path, errors);
    if (!isJsonObject(message) || !Array.isArray(message.content)) continue;
    // A message of neither role is refused for it, and its blocks are read as a user's.
    const isAssistant = message.role === 'assistant';
    const blocks = message.content;
    for (let j = 0; j < blocks.length && !errors.isFull; j++) checkBlock(blocks[j], `${path}.content.${j}`, isAssistant, errors);
  }
}

function checkBlock(block: unknown, path: string, isAssistant: boolean, errors: FieldErrors): void {
  check(isAssistant ? checkAssistantBlock : checkUserBlock, block, path, errors);
  // A tool result's text blocks: its last field, so reported after the block's others.
  if (!isAssistant && isJsonObject(block) && block.type === 'tool_result' && Array.isArray(block.content)) {
    checkEach(checkTextBlock, block.content, `${path}.content`, errors);
  }
}

function checkEach(validate: ValidateFunction, items: unknown[], path: string, errors: FieldErrors): void {
  for (let i = 0; i < items.length && !errors.isFull; i++) check(validate, items[i], `${path}.${i}`, errors);
}

function check(validate: ValidateFunction, value: unknown, path: string, errors: FieldErrors): void {
  if (!validate(value)) report(refusalsOf(validate.errors ?? [], path), errors);
}

// ---------------------------------------------------------------------------------------
// Ajv errors → field paths and messages

interface Refusal {
  path: string;
  message: string;
}

function report(refusals: readonly Refusal[], errors: FieldErrors): void {
  for (const { path, message } of refusals) errors.add(path, message);
}

/** Ajv reports every missing field first: grouped by the request field each is about, they are reported in the request's order. */
function byRequestField(refusals: readonly Refusal[]): Map<string, Refusal[]> {
  const grouped = new Map<string, Refusal[]>();
  for (const refusal of refusals) {
    const field = refusal.path.split('.', 1)[0]!;
    const group = grouped.get(field);
    if (group === undefined) grouped.set(field, [refusal]);
    else group.push(refusal);
  }
  return grouped;
}

function refusalsOf(ajvErrors: readonly ErrorObject[], basePath: string): Refusal[] {
  return ajvErrors.flatMap((error) => {
    // A failed if/then/else: the errors of its then or else say what is wrong.
    if (error.keyword === 'if') return [];
    const params: Record<string, unknown> = error.params;
    let child = '';
    let schema: unknown = error.parentSchema;
    let annotation = MESSAGE;
    if (error.keyword === 'required') {
      // A missing field gets the message of the field's own schema.
      child = String(params.missingProperty);
      schema = propertySchema(schema, child);
    } else if (error.keyword === 'discriminator') {
      child = String(params.tag);
      annotation = TAG_MESSAGE;
    }
    const message = isJsonObject(schema) ? schema[annotation] : undefined;
    const path = joinPath(basePath, joinPath(dottedPath(error.instancePath), child));
    return [{ path: path === '' ? 'body' : path, message: typeof message === 'string' ? message : 'is invalid' }];
  });
}

function propertySchema(schema: unknown, name: string): unknown {
  const properties = isJsonObject(schema) ? schema.properties : undefined;
  return isJsonObject(properties) ? properties[name] : undefined;
}
