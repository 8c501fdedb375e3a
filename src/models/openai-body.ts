// OpenAI's chat completion bodies as lmgate writes them (the demo models, and the usage
// lmgate adds to an upstream's answer when it counted the tokens itself). Every usage
// lmgate writes carries `cost`: the credits the request is charged, as OpenRouter reports
// it. Bodies are
// written as JSON text around JSON.stringify of the content: the fields are fixed and
// only the content needs escaping, measured about 15x faster per chunk than stringifying
// a whole object.
import { randomBase62 } from '../ids.js';
import { formatCredits, microsToCredits } from '../money.js';
import type { Usage } from '../billing/usage.js';
import type { ChatUsageBody } from '../anthropic/chat-wire.js';

export type FinishReason = 'stop' | 'length';

const SYSTEM_FINGERPRINT = 'fp_lmgate_demo';

/** The chunks of one streamed answer. */
export class ChunkWriter {
  private readonly head: string;
  private readonly tail: string;
  private readonly contentHeads: string[] = [];
  private readonly contentTail: string;

  constructor(
    private readonly id: string,
    private readonly createdUnixSec: number,
    private readonly modelId: string,
    includeUsage: boolean,
  ) {
    this.head =
      `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${createdUnixSec},` +
      `"model":${JSON.stringify(modelId)},"service_tier":"default",` +
      `"system_fingerprint":"${SYSTEM_FINGERPRINT}","choices":[{"index":`;
    // With include_usage, OpenAI puts "usage": null on every chunk but the last.
    this.tail = includeUsage ? '}],"usage":null}' : '}]}';
    this.contentTail = '},"logprobs":null,"finish_reason":null' + this.tail;
  }

  role(index: number): string {
    return `${this.head}${index},"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null${this.tail}`;
  }

  content(index: number, text: string): string {
    const head = this.contentHeads[index] ?? (this.contentHeads[index] = `${this.head}${index},"delta":{"content":`);
    return head + JSON.stringify(text) + this.contentTail;
  }

  /** `stopSequence`: the one that ended the choice, as vLLM's `stop_reason` says it. */
  finish(index: number, reason: FinishReason, stopSequence: string | null = null): string {
    const stop = stopSequence === null ? '' : `,"stop_reason":${JSON.stringify(stopSequence)}`;
    return `${this.head}${index},"delta":{},"logprobs":null,"finish_reason":"${reason}"${stop}${this.tail}`;
  }

  usage(usage: Usage, costMicros: number): string {
    return (
      `{"id":${JSON.stringify(this.id)},"object":"chat.completion.chunk","created":${this.createdUnixSec},` +
      `"model":${JSON.stringify(this.modelId)},"service_tier":"default","system_fingerprint":"${SYSTEM_FINGERPRINT}",` +
      `"choices":[],"usage":${usageJson(usage, costMicros)}}`
    );
  }
}

/** One choice of a whole answer. */
export interface AnsweredChoice {
  index: number;
  finishReason: FinishReason | null;
  /** The stop sequence that ended it, if one did (vLLM's `stop_reason`). */
  stopSequence?: string | null;
}

/** The `chat.completion` body. */
export function completionJson(modelId: string, runs: readonly AnsweredChoice[], contents: readonly string[], usage: Usage, costMicros: number): string {
  let choices = '';
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!;
    if (i > 0) choices += ',';
    choices +=
      `{"index":${run.index},"message":{"role":"assistant","content":${JSON.stringify(contents[i])},` +
      `"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"${run.finishReason}"` +
      `${run.stopSequence == null ? '' : `,"stop_reason":${JSON.stringify(run.stopSequence)}`}}`;
  }
  return (
    `{"id":"${newCompletionId()}","object":"chat.completion","created":${unixSecNow()},` +
    `"model":${JSON.stringify(modelId)},"choices":[${choices}],"usage":${usageJson(usage, costMicros)},` +
    `"service_tier":"default","system_fingerprint":"${SYSTEM_FINGERPRINT}"}`
  );
}

/** The demo models' usage as OpenAI writes it, details included, and its cost. */
function usageJson(usage: Usage, costMicros: number): string {
  return (
    `{"prompt_tokens":${usage.promptTokens},"completion_tokens":${usage.completionTokens},` +
    `"total_tokens":${usage.promptTokens + usage.completionTokens},"cost":${formatCredits(costMicros)},` +
    `"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":` +
    `{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`
  );
}

/**
 * A usage as OpenAI's `usage` object, as lmgate writes it for an answer it translated,
 * counted or summed over choices: the totals, the parts priced apart that it knows of in
 * their `*_details`, and the cost (left out only by the pure translations, whose caller
 * prices the answer), nothing it does not know.
 */
export function usageBody(usage: Usage, costMicros?: number): ChatUsageBody {
  const body: ChatUsageBody = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
  if (costMicros !== undefined) body.cost = microsToCredits(costMicros);
  const writes = (usage.cacheWriteTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
  if (usage.cachedTokens || writes > 0) body.prompt_tokens_details = { cached_tokens: usage.cachedTokens ?? 0, ...(writes > 0 ? { cache_write_tokens: writes } : {}) };
  if (usage.cacheWrite1hTokens) body.prompt_tokens_details!.cache_write_1h_tokens = usage.cacheWrite1hTokens;
  if (usage.reasoningTokens) body.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return body;
}

/** A usage-only chunk (`choices: []`), as the last of a stream. */
export function usageChunkJson(modelId: string, usage: Usage, costMicros: number): string {
  return JSON.stringify({ id: newCompletionId(), object: 'chat.completion.chunk', created: unixSecNow(), model: modelId, choices: [], usage: usageBody(usage, costMicros) });
}

/** `chatcmpl-` and 29 letters and digits, like OpenAI's ids. */
export function newCompletionId(): string {
  return `chatcmpl-${randomBase62(29)}`;
}

export function unixSecNow(): number {
  return Math.floor(Date.now() / 1000);
}
