// Token counting for billing and limits, and token-sized pieces for the demo models.
// Everything uses gpt-tokenizer's default encoding (o200k_base, GPT-4o and later), so
// counts match what OpenAI reports for its current models.
import { countTokens, decodeGenerator, encode } from 'gpt-tokenizer';
import type { ChatMessage, Role } from '../chat/chat-request.js';

// Client text is data, never control tokens: by default gpt-tokenizer throws on
// "<|endoftext|>" and friends, which would let any prompt crash the count. An empty
// disallow list (and no allow list) makes them ordinary text.
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

// Chat clients resend the whole conversation every turn, so the same message texts are
// counted again and again. A small memo of short texts saves the tokenizer most of that;
// it is bounded (entries × length) and simply starts over when full.
const MEMO_MAX_ENTRIES = 4096;
const MEMO_MAX_TEXT_LENGTH = 2048;
const countMemo = new Map<string, number>();

// OpenAI's chat accounting (openai-cookbook, "How to count tokens with tiktoken"):
// every message is framed as <|start|>{role/name}\n{content}<|end|>\n, which costs 3
// tokens beyond its text, a name costs 1 more, and the reply is primed with
// <|start|>assistant<|message|>.
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;

const ROLE_TOKENS: Record<Role, number> = {
  system: countTextTokens('system'),
  developer: countTextTokens('developer'),
  user: countTextTokens('user'),
  assistant: countTextTokens('assistant'),
  tool: countTextTokens('tool'),
  function: countTextTokens('function'),
};

/** Tokens in a plain text (special-token markers count as the text they are). */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length > MEMO_MAX_TEXT_LENGTH) return countTokens(text, AS_PLAIN_TEXT);
  let tokens = countMemo.get(text);
  if (tokens === undefined) {
    tokens = countTokens(text, AS_PLAIN_TEXT);
    if (countMemo.size >= MEMO_MAX_ENTRIES) countMemo.clear();
    countMemo.set(text, tokens);
  }
  return tokens;
}

/** Prompt tokens of a chat, counted the way OpenAI bills them. */
export function countPromptTokens(messages: readonly ChatMessage[]): number {
  let tokens = REPLY_PRIMING_TOKENS;
  for (const message of messages) {
    tokens += TOKENS_PER_MESSAGE;
    tokens += ROLE_TOKENS[message.role] ?? countTextTokens(String(message.role));
    if (typeof message.name === 'string' && message.name.length > 0) {
      tokens += TOKENS_PER_NAME + countTextTokens(message.name);
    }
    const content = message.content;
    if (typeof content === 'string') {
      tokens += countTextTokens(content);
    } else if (content != null) {
      for (const part of content) {
        if (typeof part.text === 'string') tokens += countTextTokens(part.text);
        // An assistant refusal part carries its text under `refusal`, not `text`.
        else if (typeof part.refusal === 'string') tokens += countTextTokens(part.refusal);
      }
    }
    if (message.tool_calls) {
      for (const call of message.tool_calls) {
        tokens += countTextTokens(call.function.name) + countTextTokens(call.function.arguments);
      }
    }
  }
  return tokens;
}

/**
 * Splits a text into one string per token, in order; joined they give the text back.
 * A character whose UTF-8 bytes straddle tokens (emoji, CJK) appears whole in the piece
 * of the token that completes it, and the tokens before hold what could be decoded so
 * far (often ''), so the array length is always the token count.
 */
export function splitIntoTokens(text: string): string[] {
  if (text.length === 0) return [];
  const tokens = encode(text, AS_PLAIN_TEXT);
  const pieces = new Array<string>(tokens.length);
  // decodeGenerator holds bytes back until a character is complete and yields nothing
  // for the tokens in between; counting the tokens it has pulled tells us which token
  // completed each yielded string. It must be drained in one synchronous go: its UTF-8
  // decoder is shared by the whole module, so an interleaved decode would corrupt it.
  let pulled = 0;
  const countingTokens: Iterable<number> = {
    [Symbol.iterator]: () => ({
      next: (): IteratorResult<number> =>
        pulled < tokens.length
          ? { value: tokens[pulled++] as number, done: false }
          : { value: undefined, done: true },
    }),
  };
  let filled = 0;
  for (const decoded of decodeGenerator(countingTokens)) {
    while (filled < pulled - 1) pieces[filled++] = '';
    pieces[filled++] = decoded;
  }
  while (filled < tokens.length) pieces[filled++] = '';
  return pieces;
}
