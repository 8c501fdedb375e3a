// Token counting for billing and limits, and token-sized pieces for the demo models.
// Everything uses gpt-tokenizer's default encoding (o200k_base, GPT-4o and later), so
// counts match what OpenAI reports for its current models.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { countTokens, decodeGenerator, encode } from 'gpt-tokenizer';
import type { ChatMessage, Role } from '../chat/chat-request.js';
import { MAX_RUN_CHARS, textSegments } from './text-segments.js';

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

// Counting runs at 1–3 µs a character on text the tokenizer has not seen (44 MB/s on text
// it has), so a prompt of this much text costs at most ~25 ms, and is counted at once.
const SYNC_MAX_CHARS = 8192;
// Longer prompts give the event loop back this often; one segment adds at most ~12 ms.
const SLICE_MS = 8;

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
  if (text.length > MEMO_MAX_TEXT_LENGTH) return countLongText(text);
  let tokens = countMemo.get(text);
  if (tokens === undefined) {
    tokens = countLongText(text);
    if (countMemo.size >= MEMO_MAX_ENTRIES) countMemo.clear();
    countMemo.set(text, tokens);
  }
  return tokens;
}

function countLongText(text: string): number {
  let tokens = 0;
  for (const segment of textSegments(text)) tokens += countTokens(segment, AS_PLAIN_TEXT);
  return tokens;
}

/**
 * Prompt tokens of a chat, counted the way OpenAI bills them.
 *
 * A prompt of up to SYNC_MAX_CHARS characters of text is counted at once. A longer one is
 * counted segment by segment in slices of about SLICE_MS that hand the event loop back in
 * between, so that other requests are not held up by it, and counting stops as soon as
 * the count passes `limit`: the result is then above `limit` but no longer exact.
 */
export function countPromptTokens(messages: readonly ChatMessage[], limit = Infinity): number | Promise<number> {
  let tokens = REPLY_PRIMING_TOKENS;
  const texts: string[] = [];
  let chars = 0;
  const add = (text: string): void => {
    texts.push(text);
    chars += text.length;
  };
  for (const message of messages) {
    tokens += TOKENS_PER_MESSAGE + ROLE_TOKENS[message.role];
    if (typeof message.name === 'string' && message.name.length > 0) {
      tokens += TOKENS_PER_NAME;
      add(message.name);
    }
    const content = message.content;
    if (typeof content === 'string') {
      add(content);
    } else if (content != null) {
      for (const part of content) {
        if (typeof part.text === 'string') add(part.text);
        // An assistant refusal part carries its text under `refusal`, not `text`.
        else if (typeof part.refusal === 'string') add(part.refusal);
      }
    }
    // Validation lets tool calls through on assistant messages only.
    if (message.role === 'assistant' && message.tool_calls) {
      for (const call of message.tool_calls) {
        add(call.function.name);
        add(call.function.arguments);
      }
    }
  }
  return countTextsAfter(texts, chars, tokens, limit);
}

/** Tokens in plain texts (embedding inputs, a prompt), counted like a prompt's: at once when short, else in slices. */
export function countTextsTokens(texts: readonly string[], limit = Infinity): number | Promise<number> {
  let chars = 0;
  for (const text of texts) chars += text.length;
  return countTextsAfter(texts, chars, 0, limit);
}

function countTextsAfter(texts: readonly string[], chars: number, counted: number, limit: number): number | Promise<number> {
  if (chars <= SYNC_MAX_CHARS) {
    let tokens = counted;
    for (const text of texts) tokens += countTextTokens(text);
    return tokens;
  }
  return countInSlices(texts, counted, limit);
}

async function countInSlices(texts: readonly string[], counted: number, limit: number): Promise<number> {
  let tokens = counted;
  let sliceStartMs = performance.now();
  for (const text of texts) {
    for (const segment of textSegments(text)) {
      tokens += countTextTokens(segment);
      if (tokens > limit) return tokens;
      if (performance.now() - sliceStartMs >= SLICE_MS) {
        await yieldToEventLoop();
        sliceStartMs = performance.now();
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
  if (text.length <= MAX_RUN_CHARS) return splitSegmentIntoTokens(text);
  const pieces: string[] = [];
  for (const segmentPieces of splitIntoTokensBySegment(text)) {
    for (const piece of segmentPieces) pieces.push(piece);
  }
  return pieces;
}

/** splitIntoTokens a segment at a time, for a caller that may need only the start of a long text. */
export function* splitIntoTokensBySegment(text: string): Generator<string[], void, undefined> {
  for (const segment of textSegments(text)) yield splitSegmentIntoTokens(segment);
}

function splitSegmentIntoTokens(text: string): string[] {
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
