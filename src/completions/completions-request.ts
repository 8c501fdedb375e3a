// OpenAI's legacy completions request, read and translated to the chat request a chat
// backend answers: the prompt becomes one user message; sampling parameters, `n`, `stop`,
// `seed`, `stream` and `stream_options` carry over and are checked as chat checks them.
import type { ChatRequest } from '../chat/chat-request.js';
import { validateChatRequest } from '../chat/validate.js';
import { BodyFields } from '../validation/body-fields.js';

/** OpenAI's default for legacy completions, where chat has none. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

export interface CompletionsRequest {
  chat: ChatRequest;
  /** The request as the client sent it, for a model whose upstreams take it as it is (`completions: native`). */
  body: Record<string, unknown>;
  prompt: string;
  stream: boolean;
  includeUsage: boolean;
}

/** Fields of the legacy API that a chat model cannot honour. */
const UNSUPPORTED: Record<string, string> = {
  suffix: 'is not supported: answers come from chat models, which do not fill in the middle',
  logprobs: 'is not supported on /v1/completions',
};

export function validateCompletionsRequest(body: unknown): CompletionsRequest {
  const fields = BodyFields.of(body);
  const prompt = readPrompt(fields);
  for (const [field, why] of Object.entries(UNSUPPORTED)) fields.unsupported(field, why);
  if (fields.boolean('echo') === true) fields.refuse('echo', 'is not supported on /v1/completions');
  fields.integer('best_of', 1, 1);
  const { prompt: _prompt, suffix: _suffix, echo: _echo, best_of: _bestOf, logprobs: _logprobs, ...rest } = fields.body;
  const chat = fields.alsoCheck(() =>
    validateChatRequest({ ...rest, max_tokens: rest.max_tokens ?? DEFAULT_COMPLETION_MAX_TOKENS, messages: [{ role: 'user', content: prompt }] }),
  );
  fields.check();
  // check() passed, so the chat request did too.
  if (chat === undefined) throw new Error('unreachable: a refused chat request passed the check');
  return { chat, body: fields.body, prompt, stream: chat.stream === true, includeUsage: chat.stream === true && chat.stream_options?.include_usage === true };
}

/** One prompt: a string, or a list holding one string (a batch of prompts is refused). */
function readPrompt(fields: BodyFields): string {
  const prompt = fields.body.prompt;
  if (typeof prompt === 'string') return prompt;
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string') return prompt[0];
  if (prompt === undefined) fields.refuse('prompt', 'is required');
  else if (Array.isArray(prompt) && prompt.every((each) => typeof each === 'string')) fields.refuse('prompt', 'must be one prompt: send a batch as separate requests');
  else fields.refuse('prompt', 'must be a string (token ids are not supported)');
  return '';
}
