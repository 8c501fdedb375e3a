// Checks a Messages request body field by field, as Anthropic documents it: a 422 names
// each invalid field by its dotted path (`messages.1.content.0.type`), like the chat
// route's. Only what lmgate can serve passes: server tools, documents and other block
// kinds with no chat equivalent are refused by name rather than dropped.
import { ValidationError } from '../errors.js';
import { ANTHROPIC_IMAGE_TYPES, type AnthropicRequest } from './messages-wire.js';

/** As for chat: far beyond any conversation that fits a context. */
const MAX_MESSAGES = 10_000;
const MAX_MODEL_NAME_CHARS = 256;
const MAX_REPORTED_FIELDS = 50;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Fields {
  readonly errors: Record<string, string[]> = {};
  private count = 0;

  add(field: string, message: string): void {
    if (this.count >= MAX_REPORTED_FIELDS) return;
    if (this.errors[field] === undefined) this.count++;
    (this.errors[field] ??= []).push(message);
  }

  get isFull(): boolean {
    return this.count >= MAX_REPORTED_FIELDS;
  }
}

/** The body as an AnthropicRequest, or ValidationError with every invalid field. */
export function validateMessagesRequest(body: unknown): AnthropicRequest {
  if (!isRecord(body)) throw new ValidationError({ body: ['must be a JSON object'] });
  const fields = new Fields();
  const { model, max_tokens: maxTokens, messages } = body;
  if (typeof model !== 'string' || model.length === 0 || model.length > MAX_MODEL_NAME_CHARS) fields.add('model', `must be a string of 1 to ${MAX_MODEL_NAME_CHARS} characters`);
  if (!Number.isSafeInteger(maxTokens) || (maxTokens as number) < 1) fields.add('max_tokens', 'must be an integer of at least 1');
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_MESSAGES) {
    fields.add('messages', `must be an array of 1 to ${MAX_MESSAGES} messages`);
  } else {
    for (let i = 0; i < messages.length && !fields.isFull; i++) checkMessage(messages[i], `messages.${i}`, fields);
  }
  if (body.system !== undefined && typeof body.system !== 'string') checkTextBlocks(body.system, 'system', fields);
  if (body.stop_sequences !== undefined && !(Array.isArray(body.stop_sequences) && body.stop_sequences.every((s) => typeof s === 'string'))) {
    fields.add('stop_sequences', 'must be an array of strings');
  }
  checkNumber(body.temperature, 'temperature', 0, 1, fields);
  checkNumber(body.top_p, 'top_p', 0, 1, fields);
  if (body.top_k !== undefined && !(Number.isSafeInteger(body.top_k) && (body.top_k as number) >= 0)) fields.add('top_k', 'must be a non-negative integer');
  if (body.stream !== undefined && typeof body.stream !== 'boolean') fields.add('stream', 'must be a boolean');
  if (body.tools !== undefined) checkTools(body.tools, fields);
  if (body.tool_choice !== undefined) checkToolChoice(body.tool_choice, fields);
  if (body.metadata !== undefined) {
    const userId = isRecord(body.metadata) ? body.metadata.user_id : 0;
    if (userId !== undefined && userId !== null && typeof userId !== 'string') fields.add('metadata', 'must be an object with an optional string user_id');
  }
  if (Object.keys(fields.errors).length > 0) throw new ValidationError(fields.errors);
  return body as unknown as AnthropicRequest;
}

function checkNumber(value: unknown, field: string, min: number, max: number, fields: Fields): void {
  if (value !== undefined && !(typeof value === 'number' && value >= min && value <= max)) fields.add(field, `must be a number from ${min} to ${max}`);
}

function checkMessage(message: unknown, path: string, fields: Fields): void {
  if (!isRecord(message)) return fields.add(path, 'must be an object');
  const { role, content } = message;
  if (role !== 'user' && role !== 'assistant') fields.add(`${path}.role`, 'must be "user" or "assistant"');
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) return fields.add(`${path}.content`, 'must be a string or an array of content blocks');
  content.forEach((block, j) => checkBlock(block, `${path}.content.${j}`, role === 'assistant', fields));
}

function checkBlock(block: unknown, path: string, isAssistant: boolean, fields: Fields): void {
  if (!isRecord(block)) return fields.add(path, 'must be an object');
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') fields.add(`${path}.text`, 'must be a string');
      return;
    case 'image':
      return isAssistant ? fields.add(`${path}.type`, 'image blocks are only allowed in user messages') : checkImage(block.source, `${path}.source`, fields);
    case 'tool_use':
      if (!isAssistant) return fields.add(`${path}.type`, 'tool_use blocks are only allowed in assistant messages');
      if (typeof block.id !== 'string') fields.add(`${path}.id`, 'must be a string');
      if (typeof block.name !== 'string') fields.add(`${path}.name`, 'must be a string');
      if (!isRecord(block.input)) fields.add(`${path}.input`, 'must be an object');
      return;
    case 'tool_result':
      if (isAssistant) return fields.add(`${path}.type`, 'tool_result blocks are only allowed in user messages');
      if (typeof block.tool_use_id !== 'string') fields.add(`${path}.tool_use_id`, 'must be a string');
      if (block.is_error !== undefined && typeof block.is_error !== 'boolean') fields.add(`${path}.is_error`, 'must be a boolean');
      if (block.content !== undefined && typeof block.content !== 'string') checkTextBlocks(block.content, `${path}.content`, fields);
      return;
    case 'thinking':
    case 'redacted_thinking':
      // An earlier turn's reasoning, sent back as Anthropic asks: nothing a chat model reads.
      if (!isAssistant) fields.add(`${path}.type`, 'thinking blocks are only allowed in assistant messages');
      return;
    default:
      fields.add(`${path}.type`, 'must be one of: text, image, tool_use, tool_result, thinking');
  }
}

function checkImage(source: unknown, path: string, fields: Fields): void {
  if (!isRecord(source)) return fields.add(path, 'must be an object');
  if (source.type === 'url') {
    if (typeof source.url !== 'string') fields.add(`${path}.url`, 'must be a string');
  } else if (source.type === 'base64') {
    if (!ANTHROPIC_IMAGE_TYPES.some((type) => type === source.media_type)) fields.add(`${path}.media_type`, `must be one of: ${ANTHROPIC_IMAGE_TYPES.join(', ')}`);
    if (typeof source.data !== 'string') fields.add(`${path}.data`, 'must be a string');
  } else {
    fields.add(`${path}.type`, 'must be "base64" or "url"');
  }
}

function checkTextBlocks(value: unknown, path: string, fields: Fields): void {
  if (!Array.isArray(value)) return fields.add(path, 'must be a string or an array of text blocks');
  value.forEach((block, j) => {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') fields.add(`${path}.${j}`, 'must be a text block');
  });
}

function checkTools(tools: unknown, fields: Fields): void {
  if (!Array.isArray(tools)) return fields.add('tools', 'must be an array of tools');
  tools.forEach((tool, i) => {
    const path = `tools.${i}`;
    if (!isRecord(tool)) return fields.add(path, 'must be an object');
    if (tool.type !== undefined && tool.type !== 'custom') return fields.add(`${path}.type`, 'only custom tools (with an input_schema) are supported');
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) fields.add(`${path}.name`, 'must be 1 to 64 letters, digits, underscores or dashes');
    if (tool.description !== undefined && typeof tool.description !== 'string') fields.add(`${path}.description`, 'must be a string');
    if (!isRecord(tool.input_schema) || tool.input_schema.type !== 'object') fields.add(`${path}.input_schema`, 'must be a JSON Schema object with type "object"');
  });
}

function checkToolChoice(choice: unknown, fields: Fields): void {
  if (!isRecord(choice)) return fields.add('tool_choice', 'must be an object');
  if (choice.type === 'tool' && typeof choice.name !== 'string') return fields.add('tool_choice.name', 'must be a string');
  if (choice.type !== 'auto' && choice.type !== 'any' && choice.type !== 'tool' && choice.type !== 'none') fields.add('tool_choice.type', 'must be one of: auto, any, tool, none');
  if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== 'boolean') fields.add('tool_choice.disable_parallel_tool_use', 'must be a boolean');
}
