// Chat completions requests ↔ Anthropic's Messages requests, both ways, as pure functions.
//
// Where the two differ, the rules are:
// - Anthropic has one `system` prompt: every system and developer message goes there, in
//   order, one text block each (a single string message stays a string).
// - A tool's answer is a `tool_result` block in a user turn: consecutive tool messages
//   become one user turn (parallel calls answer together), and back.
// - An assistant turn's text and tool calls are blocks of one turn; a call's arguments are
//   JSON text in chat and an object in Anthropic.
// - Anthropic requires `max_tokens`; its temperature goes to 1 where OpenAI's goes to 2.
// Nothing is guessed: what cannot be said in the other API (audio, files, legacy function
// calls, arguments that are not a JSON object) is refused with a 422 naming the field.
import type { ChatMessage, ChatRequest } from '../chat/chat-request.js';
import { stopSequences } from '../chat/chat-request.js';
import { ValidationError } from '../errors.js';
import { ANTHROPIC_IMAGE_TYPES } from './messages-wire.js';
import type {
  AnthropicImageBlock,
  AnthropicMessageParam,
  AnthropicRequest,
  AnthropicTextBlock,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
  AnthropicUserBlockParam,
  WrittenAnthropicMessageParam,
  WrittenAnthropicRequest,
} from './messages-wire.js';

export interface AnthropicRequestOptions {
  /** The upstream's name for the model. */
  model: string;
  /** Output tokens at most (lmgate's ceiling for the call). */
  maxTokens: number;
  stream: boolean;
}

const ANTHROPIC_MAX_TEMPERATURE = 1;
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** A chat request as Anthropic's Messages request. Throws ValidationError for what it cannot express. */
export function chatToAnthropicRequest(chat: ChatRequest, options: AnthropicRequestOptions): WrittenAnthropicRequest {
  if (chat.functions !== undefined) throw new ValidationError({ functions: [UNSUPPORTED_LEGACY] });
  if (chat.n != null && chat.n > 1) throw new ValidationError({ n: ['must be 1 for this model'] });
  const system: AnthropicTextBlock[] = [];
  const messages: WrittenAnthropicMessageParam[] = [];
  chat.messages.forEach((message, i) => {
    if (message.role === 'system' || message.role === 'developer') {
      system.push({ type: 'text', text: textOf(message.content, i) });
    } else if (message.role === 'tool') {
      const result: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id, content: toolResultContent(message.content, i) };
      const last = messages.at(-1);
      // Answers to parallel calls go back in one turn, as Anthropic requires.
      if (last !== undefined && last.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result')) last.content.push(result);
      else messages.push({ role: 'user', content: [result] });
    } else if (message.role === 'user') {
      messages.push({ role: 'user', content: userContent(message, i) });
    } else if (message.role === 'assistant') {
      messages.push({ role: 'assistant', content: assistantContent(message, i) });
    } else {
      throw new ValidationError({ [`messages.${i}.role`]: [UNSUPPORTED_LEGACY] });
    }
  });

  const request: WrittenAnthropicRequest = { model: options.model, max_tokens: options.maxTokens, messages };
  if (system.length === 1 && typeof chat.messages.find(isSystem)?.content === 'string') request.system = system[0]!.text;
  else if (system.length > 0) request.system = system;
  const stop = stopSequences(chat);
  if (stop.length > 0) request.stop_sequences = stop;
  if (chat.temperature != null) request.temperature = Math.min(chat.temperature, ANTHROPIC_MAX_TEMPERATURE);
  if (chat.top_p != null) request.top_p = chat.top_p;
  if (options.stream) request.stream = true;
  if (chat.tools !== undefined) {
    request.tools = chat.tools.map(({ function: fn }) => ({
      name: fn.name,
      ...(fn.description !== undefined ? { description: fn.description } : {}),
      // A function's parameters are always an object's schema; Anthropic wants it said.
      input_schema: { ...(fn.parameters ?? { properties: {} }), type: 'object' as const },
    }));
  }
  const toolChoice = anthropicToolChoice(chat);
  if (toolChoice !== undefined) request.tool_choice = toolChoice;
  if (chat.user !== undefined) request.metadata = { user_id: chat.user };
  return request;
}

const UNSUPPORTED_LEGACY = 'legacy function calling is not supported by this model; use tools';

function isSystem(message: ChatMessage): boolean {
  return message.role === 'system' || message.role === 'developer';
}

/** Text-only content (system, tool): a string, or its text parts joined. */
function textOf(content: ChatMessage['content'], i: number): string {
  if (content == null || typeof content === 'string') return content ?? '';
  return content.map((part, j) => {
    if (typeof part.text !== 'string') throw new ValidationError({ [`messages.${i}.content.${j}`]: ['only text parts are supported here by this model'] });
    return part.text;
  }).join('');
}

function toolResultContent(content: ChatMessage['content'], i: number): AnthropicToolResultBlock['content'] {
  if (typeof content === 'string') return content;
  return [{ type: 'text', text: textOf(content, i) }];
}

function userContent(message: Extract<ChatMessage, { role: 'user' }>, i: number): string | AnthropicUserBlockParam[] {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part, j): AnthropicUserBlockParam => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image_url') return imageBlock(part.image_url.url, `messages.${i}.content.${j}.image_url.url`);
    throw new ValidationError({ [`messages.${i}.content.${j}.type`]: [`${part.type} parts are not supported by this model`] });
  });
}

function imageBlock(url: string, field: string): AnthropicImageBlock {
  const data = DATA_URL.exec(url);
  if (data !== null) {
    const mediaType = ANTHROPIC_IMAGE_TYPES.find((type) => type === data[1]);
    if (mediaType === undefined) throw new ValidationError({ [field]: [`must be an image of type ${ANTHROPIC_IMAGE_TYPES.join(', ')} for this model`] });
    return { type: 'image', source: { type: 'base64', media_type: mediaType, data: data[2]! } };
  }
  return { type: 'image', source: { type: 'url', url } };
}

function assistantContent(message: Extract<ChatMessage, { role: 'assistant' }>, i: number): string | (AnthropicTextBlock | AnthropicToolUseBlock)[] {
  if (message.function_call != null) throw new ValidationError({ [`messages.${i}.function_call`]: [UNSUPPORTED_LEGACY] });
  const content = message.content;
  const toolCalls = message.tool_calls ?? [];
  if (toolCalls.length === 0 && (content === null || typeof content === 'string')) return content ?? '';
  const blocks: (AnthropicTextBlock | AnthropicToolUseBlock)[] = [];
  if (typeof content === 'string') {
    if (content.length > 0) blocks.push({ type: 'text', text: content });
  } else if (content !== null) {
    for (const part of content) blocks.push({ type: 'text', text: part.type === 'text' ? part.text : part.refusal });
  }
  toolCalls.forEach((call, j) => blocks.push(toolUseBlock(call, `messages.${i}.tool_calls.${j}.function.arguments`)));
  return blocks;
}

function toolUseBlock(call: { id: string; function: { name: string; arguments: string } }, field: string): AnthropicToolUseBlock {
  const input = parseArguments(call.function.arguments);
  if (input === undefined) throw new ValidationError({ [field]: ['must be a JSON object for this model'] });
  return { type: 'tool_use', id: call.id, name: call.function.name, input };
}

/** A tool call's arguments as an object; undefined when they are not one. An empty text is no arguments. */
export function parseArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim().length === 0) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function anthropicToolChoice(chat: ChatRequest): AnthropicToolChoice | undefined {
  const choice = chat.tool_choice;
  const serial = chat.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...serial };
  if (typeof choice === 'object') return { type: 'tool', name: choice.function.name, ...serial };
  if (choice === 'auto' || chat.parallel_tool_calls === false) return { type: 'auto', ...serial };
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Anthropic → chat

/** An Anthropic Messages request as a chat request (the same conversation, tools and limits). */
export function anthropicToChatRequest(request: AnthropicRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  if (typeof request.system === 'string') messages.push({ role: 'system', content: request.system });
  else for (const block of request.system ?? []) messages.push({ role: 'system', content: block.text });
  for (const message of request.messages) {
    if (message.role === 'assistant') messages.push(chatAssistantMessage(message.content));
    else messages.push(...chatUserMessages(message.content));
  }
  const chat: ChatRequest = { model: request.model, messages, max_tokens: request.max_tokens };
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) chat.stop = request.stop_sequences;
  if (request.temperature !== undefined) chat.temperature = request.temperature;
  if (request.top_p !== undefined) chat.top_p = request.top_p;
  if (request.stream === true) chat.stream = true;
  if (request.tools !== undefined && request.tools.length > 0) {
    chat.tools = request.tools.map((tool) => ({
      type: 'function' as const,
      function: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), parameters: tool.input_schema },
    }));
  }
  const choice = request.tool_choice;
  if (choice !== undefined) {
    if (choice.type === 'none') chat.tool_choice = 'none';
    else if (choice.type === 'any') chat.tool_choice = 'required';
    else if (choice.type === 'tool') chat.tool_choice = { type: 'function', function: { name: choice.name } };
    else chat.tool_choice = 'auto';
    if (choice.type !== 'none' && choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  }
  if (request.metadata?.user_id != null) chat.user = request.metadata.user_id;
  return chat;
}

function chatAssistantMessage(content: Extract<AnthropicMessageParam, { role: 'assistant' }>['content']): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  let text = '';
  const toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  for (const block of content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use') toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } });
  }
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text.length > 0 ? text : null, tool_calls: toolCalls };
}

/** A user turn: one tool message per tool result, then the rest as one user message. */
function chatUserMessages(content: Extract<AnthropicMessageParam, { role: 'user' }>['content']): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const messages: ChatMessage[] = [];
  const parts: ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[] = [];
  for (const block of content) {
    if (block.type === 'tool_result') messages.push({ role: 'tool', tool_call_id: block.tool_use_id, content: toolMessageContent(block.content) });
    else if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'image') parts.push({ type: 'image_url', image_url: { url: imageUrl(block) } });
  }
  if (parts.length > 0) messages.push({ role: 'user', content: parts });
  return messages;
}

function toolMessageContent(content: AnthropicToolResultBlock['content']): string | { type: 'text'; text: string }[] {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.length === 0 ? '' : content.map((block) => ({ type: 'text' as const, text: block.text }));
}

function imageUrl(block: AnthropicImageBlock): string {
  const source = block.source;
  return source.type === 'url' ? source.url : `data:${source.media_type};base64,${source.data}`;
}
