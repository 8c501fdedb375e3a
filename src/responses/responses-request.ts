// OpenAI's Responses API request, read and translated to the chat request a chat backend
// answers: `instructions` become a system message, `input` (a text, or message items with
// text parts) the messages, `max_output_tokens` the output ceiling. Stored responses are
// not offered: `previous_response_id` and `store: true` are refused with 400.
import type { ChatRequest } from '../chat/chat-request.js';
import { validateChatRequest } from '../chat/validate.js';
import { Refusal } from '../errors.js';
import { BodyFields, isJsonObject } from '../http/body-fields.js';

export interface ResponsesRequest {
  chat: ChatRequest;
  stream: boolean;
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
  // No store here: an answer cannot be referred to later, so neither may be asked for.
  if (fields.body.previous_response_id != null) throw new Refusal('previous_response_id_unsupported');
  if (fields.body.store === true) throw new Refusal('store_unsupported');
  const model = fields.model();
  const instructions = fields.string('instructions');
  const messages = readInput(fields);
  const maxOutputTokens = fields.integer('max_output_tokens', 1);
  const temperature = fields.number('temperature', 0, 2);
  const topP = fields.number('top_p', 0, 1);
  const stream = fields.boolean('stream') === true;
  const user = fields.string('user');
  const metadata = fields.body.metadata;
  if (metadata != null && !isJsonObject(metadata)) fields.refuse('metadata', 'must be an object');
  const tools = fields.body.tools;
  if (tools != null && !(Array.isArray(tools) && tools.length === 0)) fields.refuse('tools', 'are not supported on /v1/responses; use /v1/chat/completions for tools');
  fields.check();

  if (instructions !== undefined) messages.unshift({ role: 'system', content: instructions });
  const chat = validateChatRequest({
    model,
    messages,
    ...(maxOutputTokens !== undefined ? { max_tokens: maxOutputTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { top_p: topP } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(stream ? { stream: true } : {}),
  });
  return {
    chat,
    stream,
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

/** `input` as chat messages: a text is one user message; items are messages with text. */
function readInput(fields: BodyFields): { role: string; content: string }[] {
  const input = fields.body.input;
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input) || input.length === 0) {
    fields.refuse('input', input === undefined ? 'is required' : 'must be a string or a non-empty array of message items');
    return [];
  }
  const messages: { role: string; content: string }[] = [];
  input.forEach((item: unknown, index) => {
    const at = `input.${index}`;
    if (!isJsonObject(item)) return fields.refuse(at, 'must be an object');
    if (item.type !== undefined && item.type !== 'message') return fields.refuse(`${at}.type`, 'only message items are supported');
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
