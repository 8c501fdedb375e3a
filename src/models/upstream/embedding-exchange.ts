// One embeddings request to one deployment's /embeddings: the client's request with only
// `model` changed, the answer read whole and shown with lmgate's model id. Usage is the
// upstream's `prompt_tokens`, or lmgate's count when it reports none.
import type { Dispatcher } from 'undici';
import { AttemptFailure, ClientGoneError } from '../../errors.js';
import type { CompletionResult, EmbeddingCall } from '../backend.js';
import type { Deployment } from './deployment.js';
import { Exchange, MAX_ANSWER_BYTES } from './exchange.js';
import { isRecord, upstreamRequestText } from './wire.js';

export class EmbeddingExchange extends Exchange<CompletionResult, EmbeddingCall> {
  private parts: Buffer[] = [];
  private bytes = 0;

  constructor(call: EmbeddingCall, deployment: Deployment) {
    super(call, deployment);
    const upstreamModel = deployment.config.model;
    const renamed = call.requestText === undefined ? undefined : upstreamRequestText(call.requestText, call.modelId, upstreamModel, false);
    this.start(renamed ?? JSON.stringify({ ...call.request.body, model: upstreamModel }), false, deployment.embeddingsPath);
  }

  protected answerData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > MAX_ANSWER_BYTES) {
      this.fail(new AttemptFailure('bad_answer', 'upstream answer too large', this.deployment.label));
      controller.abort(new Error('answer too large'));
      return;
    }
    this.parts.push(chunk);
  }

  protected answerEnd(): void {
    const where = this.deployment.label;
    let answer: unknown;
    try {
      answer = JSON.parse(Buffer.concat(this.parts, this.bytes).toString('utf8'));
    } catch (err) {
      return this.fail(new AttemptFailure('bad_answer', 'upstream sent malformed JSON', where, err));
    }
    if (!isRecord(answer) || !Array.isArray(answer.data)) {
      return this.fail(new AttemptFailure('bad_answer', 'upstream answer is not a list of embeddings', where));
    }
    const reported = isRecord(answer.usage) ? answer.usage.prompt_tokens : undefined;
    const promptTokens = typeof reported === 'number' && Number.isSafeInteger(reported) && reported >= 0 ? reported : this.call.promptTokens;
    answer.model = this.call.modelId;
    answer.usage = { prompt_tokens: promptTokens, total_tokens: promptTokens };
    this.succeed({ body: JSON.stringify(answer), usage: { promptTokens, completionTokens: 0 }, finishReason: null }, 'ok');
  }

  protected transportError(err: unknown): void {
    this.fail(this.failureOf(err));
  }

  protected clientGone(): void {
    this.fail(new ClientGoneError());
  }
}
