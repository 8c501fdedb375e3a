// OpenAI's Responses API request, read. The fields lmgate meters and echoes are checked for
// every model; the request is also translated to the chat request a chat backend answers
// (`instructions` a system message, `input` (a text, or message items with text parts) the
// messages, `max_output_tokens` the output ceiling), which only models without a native
// upstream need: what chat cannot carry (tools, other items) is refused for those alone.
// Stored responses are not offered: `previous_response_id` and `store: true` get 400.
import type { ChatRequest } from '../chat/chat-request.js';
import { validateChatRequest } from '../chat/validate.js';
import { Refusal, ValidationError } from '../errors.js';
import { BodyFields, isJsonObject } from '../validation/body-fields.js';

export interface ResponsesRequest {
  model: string;
  stream: boolean;
  /** The client's body, passed to an upstream that speaks the Responses API. */
  body: Record<string, unknown>;
  maxOutputTokens: number | undefined;
  /** The request as chat, or the 422 naming what chat cannot carry. */
  chat: ChatRequest | ValidationError;
  /** Echoed in the response object, as OpenAI does. */
  echo: ResponseSettings;
}

export interface ResponseSettings {
  instructions: string | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  metadata: Record<string, unknown>;
  user: string | null;
}

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);
/** Text parts of input items: what the client wrote, and what an assistant answered before. */
const TEXT_PARTS = new Set(['input_text', 'output_text']);

export function validateResponsesRequest(body: unknown): ResponsesRequest {
  const fields = BodyFields.of(body);
  // Nothing is stored: an answer cannot be referred to later, so neither may be asked for.
  if (fields.body.previous_response_id != null) throw new Refusal('previous_response_id_unsupported');
  if (fields.body.store === true) throw new Refusal('store_unsupported');
  const model = fields.model();
  const instructions = fields.string('instructions');
  const input = fields.body.input;
  if (typeof input !== 'string' && !(Array.isArray(input) && input.length > 0)) {
    fields.refuse('input', input === undefined ? 'is required' : 'must be a string or a non-empty array of input items');
  } else if (Array.isArray(input)) {
    input.forEach((item: unknown, index) => {
      if (!isJsonObject(item)) fields.refuse(`input.${index}`, 'must be an object');
    });
  }
  const maxOutputTokens = fields.integer('max_output_tokens', 1);
  const temperature = fields.number('temperature', 0, 2);
  const topP = fields.number('top_p', 0, 1);
  const stream = fields.boolean('stream') === true;
  const user = fields.string('user');
  const metadata = fields.body.metadata;
  if (metadata != null && !isJsonObject(metadata)) fields.refuse('metadata', 'must be an object');
  fields.check();

  const settings = { model, instructions, maxOutputTokens, temperature, topP, user, stream };
  return {
    model,
    stream,
    body: fields.body,
    maxOutputTokens,
    chat: asChat(fields.body, settings),
    echo: {
      instructions: instructions ?? null,
      maxOutputTokens: maxOutputTokens ?? null,
      temperature: temperature ?? null,
      topP: topP ?? null,
      metadata: isJsonObject(metadata) ? metadata : {},
      user: user ?? null,
    },
  };
}

/** The request as chat, for a model answered through chat; the 422 of what chat cannot carry. */
export function chatOf(request: ResponsesRequest): ChatRequest {
  if (request.chat instanceof ValidationError) throw request.chat;
  return request.chat;
}

/** The texts a prompt count reads: the instructions and the text of every input item. */
export function promptTextsOf(body: Record<string, unknown>): string[] {
  const texts: string[] = [];
  const add = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
  };
  add(body.instructions);
  const { input } = body;
  if (!Array.isArray(input)) {
    add(input);
    return texts;
  }
  for (const item of input) {
    if (!isJsonObject(item)) continue;
    // A message's content; a function call's name and arguments; a tool's output.
    for (const field of ['content', 'name', 'arguments', 'output']) add(item[field]);
    for (const parts of [item.content, item.summary, item.output]) {
      if (!Array.isArray(parts)) continue;
      for (const part of parts) if (isJsonObject(part)) add(part.text);
    }
  }
  return texts;
}

/** The chat request for a model answered through chat, or the 422 of what it cannot carry. */
function asChat(
  body: Record<string, unknown>,
  settings: { model: string; instructions?: string; maxOutputTokens?: number; temperature?: number; topP?: number; user?: string; stream: boolean },
): ChatRequest | ValidationError {
  const fields = BodyFields.of(body);
  const messages = readMessages(fields);
  const tools = body.tools;
  if (tools != null && !(Array.isArray(tools) && tools.length === 0)) {
    fields.refuse('tools', 'are not supported for this model on /v1/responses; use /v1/chat/completions for tools');
  }
  try {
    fields.check();
    if (settings.instructions !== undefined) messages.unshift({ role: 'system', content: settings.instructions });
    return validateChatRequest({
      model: settings.model,
      messages,
      ...(settings.maxOutputTokens !== undefined ? { max_tokens: settings.maxOutputTokens } : {}),
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
      ...(settings.topP !== undefined ? { top_p: settings.topP } : {}),
      ...(settings.user !== undefined ? { user: settings.user } : {}),
      ...(settings.stream ? { stream: true } : {}),
    });
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
}

/** `input` as chat messages: a text is one user message; items are messages with text. */
function readMessages(fields: BodyFields): { role: string; content: string }[] {
  const input = fields.body.input;
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const messages: { role: string; content: string }[] = [];
  (input as Record<string, unknown>[]).forEach((item, index) => {
    const at = `input.${index}`;
    if (item.type !== undefined && item.type !== 'message') return fields.refuse(`${at}.type`, 'only message items are supported for this model');
    if (typeof item.role !== 'string' || !ROLES.has(item.role)) return fields.refuse(`${at}.role`, 'must be one of: user, assistant, system, developer');
    const content = textOf(item.content);
    if (content === undefined) return fields.refuse(`${at}.content`, 'must be a string or an array of input_text/output_text parts');
    messages.push({ role: item.role, content });
  });
  return messages;
}

function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  let text = '';
  for (const part of content) {
    if (!isJsonObject(part) || typeof part.type !== 'string' || !TEXT_PARTS.has(part.type) || typeof part.text !== 'string') return undefined;
    text += part.text;
  }
  return text;
}
