// The validated shape of an OpenAI chat completions request, read off its schemas
// (request-schema.ts). Validation (chat/validate.ts) guarantees these types; unknown extra
// fields are kept on the object so they can pass through to an upstream untouched.
import type { Static } from '@sinclair/typebox';
import type {
  AssistantMessage,
  ChatRequestSchema,
  DeveloperMessage,
  FunctionMessage,
  SystemMessage,
  ToolMessage,
  UserMessage,
} from './request-schema.js';

/** Fields the schema does not name, readable as unknown. */
type Open<T> = T & { [extra: string]: unknown };

type Assistant = Static<typeof AssistantMessage>;

export type ChatMessage =
  | Open<Static<typeof SystemMessage>>
  | Open<Static<typeof DeveloperMessage>>
  | Open<Static<typeof UserMessage>>
  // validateChatRequest gives an assistant message without content `content: null`.
  | Open<Omit<Assistant, 'content'> & { content: Exclude<Assistant['content'], undefined> }>
  | Open<Static<typeof ToolMessage>>
  | Open<Static<typeof FunctionMessage>>;

export type Role = ChatMessage['role'];

export type ChatRequest = Open<Omit<Static<typeof ChatRequestSchema>, 'messages'> & { messages: ChatMessage[] }>;

/** The output-token ceiling the client asked for, if any (max_completion_tokens wins). */
export function requestedMaxTokens(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

/** Stop sequences as a list (OpenAI accepts one string or up to four). */
export function stopSequences(request: ChatRequest): string[] {
  const stop = request.stop;
  if (stop == null) return [];
  return (typeof stop === 'string' ? [stop] : stop).filter((s) => s.length > 0);
}

/** The plain text of a message's content: strings as they are, text parts joined. */
export function textOfContent(content: ChatMessage['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (typeof part.text === 'string') text += part.text;
  return text;
}
