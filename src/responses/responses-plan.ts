// The token plan of a Responses API request: for a model answered through chat, the chat
// plan of its translation; passed through to an upstream that speaks the API, a count of
// its texts (the upstream's usage is what is charged; the count sizes the reservation).
import { planOutput, planTokens, type TokenPlan } from '../chat/plan.js';
import { withFieldNames } from '../validation/body-fields.js';
import { andThen, type MaybePromise } from '../maybe-promise.js';
import type { ModelEntry } from '../models/catalog.js';
import { countTextsTokens } from '../models/tokens.js';
import { chatOf, promptTextsOf, type ResponsesRequest } from './responses-request.js';

const FIELDS = { prompt: 'input', maxTokens: 'max_output_tokens' };

export function planResponse(request: ResponsesRequest, model: ModelEntry): MaybePromise<TokenPlan> {
  if (model.responder !== undefined) {
    return andThen(countTextsTokens(promptTextsOf(request.body), model.contextTokens), (promptTokens) =>
      planOutput(model, promptTokens, request.maxOutputTokens, FIELDS, { calibration: model.calibrations.of('responses') }),
    );
  }
  const chat = chatOf(request);
  return withFieldNames({ messages: FIELDS.prompt, max_tokens: FIELDS.maxTokens }, () => planTokens(chat, model));
}
