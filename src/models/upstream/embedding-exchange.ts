// One embeddings request to one deployment's /embeddings: the client's request with only
// `model` changed, the answer read whole and shown with lmgate's model id. Usage is the
// upstream's `prompt_tokens`, or lmgate's count when it reports none.
import { AttemptFailure } from '../../errors.js';
import type { EmbeddingCall } from '../backend.js';
import type { Deployment } from './deployment.js';
import { WholeAnswerExchange } from './exchange.js';
import { usageOfEmbeddings } from './usage-readers.js';
import { isRecord, upstreamRequestText } from './wire.js';

export class EmbeddingExchange extends WholeAnswerExchange<EmbeddingCall> {
  constructor(call: EmbeddingCall, deployment: Deployment) {
    super(call, deployment);
    const upstreamModel = deployment.config.model;
    const renamed = call.requestText === undefined ? undefined : upstreamRequestText(call.requestText, call.modelId, upstreamModel, false);
    this.start(renamed ?? JSON.stringify({ ...call.request.body, model: upstreamModel }), false, deployment.embeddingsPath);
  }

  protected read(text: string): void {
    const answer = this.parsed(text);
    if (answer === undefined) return;
    if (!isRecord(answer) || !Array.isArray(answer.data)) {
      return this.fail(new AttemptFailure('bad_answer', 'upstream answer is not a list of embeddings', this.deployment.label));
    }
    // Nothing is generated: the input is the whole usage, reported or counted.
    const usage = usageOfEmbeddings(answer.usage) ?? { promptTokens: this.call.promptTokens, completionTokens: 0, basis: 'counted' as const };
    answer.model = this.call.modelId;
    answer.usage = { prompt_tokens: usage.promptTokens, total_tokens: usage.promptTokens };
    this.succeed({ body: JSON.stringify(answer), usage, finishReason: null }, 'ok');
  }
}
