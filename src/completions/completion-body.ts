// The legacy completions answer, from a chat backend's: `text_completion` bodies, and
// `text_completion` chunks written as the chat chunks arrive.
import type { Usage } from '../billing/usage.js';
import { randomBase62 } from '../ids.js';
import type { ChunkSink } from '../models/backend.js';
import { readChatChunk, readChatCompletion } from '../models/chat-answer.js';
import { unixSecNow } from '../models/openai-body.js';

/** `cmpl-` and 29 letters and digits, like OpenAI's ids. */
function newTextCompletionId(): string {
  return `cmpl-${randomBase62(29)}`;
}

function usageJson(usage: Usage): Record<string, number> {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens };
}

/** The whole `text_completion`, from the chat.completion text a backend answered. */
export function textCompletionJson(chatBody: string, modelId: string, usage: Usage): string {
  const answer = readChatCompletion(chatBody);
  return JSON.stringify({
    id: newTextCompletionId(),
    object: 'text_completion',
    created: answer.createdUnixSec,
    model: modelId,
    choices: answer.choices.map((choice) => ({ text: choice.text, index: choice.index, logprobs: null, finish_reason: choice.finishReason })),
    usage: usageJson(usage),
  });
}

/** A ChunkSink that writes each chat chunk's text as a `text_completion` chunk into the client's stream. */
export class TextCompletionSink implements ChunkSink {
  private readonly id = newTextCompletionId();
  private readonly createdUnixSec = unixSecNow();

  constructor(
    private readonly events: ChunkSink,
    private readonly modelId: string,
  ) {}

  send(json: string): boolean {
    const choices = [];
    for (const choice of readChatChunk(json).choices) {
      // The chat stream's opening chunk (role, no text) has no counterpart here.
      if (choice.text === '' && choice.finishReason === null) continue;
      choices.push({ text: choice.text, index: choice.index, logprobs: null, finish_reason: choice.finishReason });
    }
    if (choices.length === 0) return true;
    return this.events.send(this.chunk(choices));
  }

  drained(): Promise<void> {
    return this.events.drained();
  }

  /** The last chunk OpenAI sends with `stream_options.include_usage`: no choices, the usage. */
  sendUsage(usage: Usage): void {
    this.events.send(JSON.stringify({ ...this.head(), choices: [], usage: usageJson(usage) }));
  }

  private chunk(choices: unknown[]): string {
    return JSON.stringify({ ...this.head(), choices });
  }

  private head(): Record<string, unknown> {
    return { id: this.id, object: 'text_completion', created: this.createdUnixSec, model: this.modelId };
  }
}
