// Sends one fuzz case over a raw socket and judges every answer: never a 5xx, every
// refusal in the spec's body with its request id, and an answer (not a hang) whenever the
// request was complete.
import { sendRaw, type ParsedResponse } from '../helpers/raw-http.js';
import type { FuzzCase } from './cases.js';

export interface CaseOutcome {
  /** Status of each answer, in order; empty when the server waited or closed without one. */
  statuses: number[];
  /** Request ids of answers with a 2xx status: the only requests that may cost credits. */
  paidRequestIds: string[];
  problems: string[];
}

/** How long a complete request may take to be answered before it counts as a hang. */
const ANSWER_TIMEOUT_MS = 10_000;
/** How long to listen when the request was incomplete and the server may rightly wait. */
const WAIT_MS = 300;

export async function runCase(port: number, fuzzCase: FuzzCase): Promise<CaseOutcome> {
  const outcome: CaseOutcome = { statuses: [], paidRequestIds: [], problems: [] };
  let responses: ParsedResponse[];
  try {
    ({ responses } = await sendRaw(port, '', {
      chunks: fuzzCase.chunks,
      responses: fuzzCase.requests,
      head: fuzzCase.head,
      closeWaitMs: 0,
      timeoutMs: fuzzCase.mayWait ? WAIT_MS : ANSWER_TIMEOUT_MS,
    }));
  } catch (err) {
    if (!fuzzCase.mayWait) outcome.problems.push(`no answer to a complete request: ${(err as Error).message}`);
    return outcome;
  }
  for (const [i, response] of responses.entries()) {
    outcome.statuses.push(response.status);
    const requestId = response.headers['x-request-id']?.[0];
    if (response.status >= 200 && response.status < 300 && requestId) outcome.paidRequestIds.push(requestId);
    for (const problem of judge(response, fuzzCase.head && i === 0)) outcome.problems.push(`answer ${i + 1} (${response.status}): ${problem}`);
  }
  return outcome;
}

/** What is wrong with one answer, if anything. */
export function judge(response: ParsedResponse, head: boolean): string[] {
  const problems: string[] = [];
  const { status, headers } = response;
  if (status >= 500) problems.push('a server error');
  const requestId = headers['x-request-id']?.[0];
  if (!requestId) problems.push('no x-request-id');
  if (status < 300) return problems;
  if (headers['content-type']?.[0] !== 'application/json; charset=utf-8') problems.push(`content-type ${JSON.stringify(headers['content-type'])}`);
  if (head) return problems;
  let body: { error?: { message?: unknown; code?: unknown; type?: unknown; request_id?: unknown } };
  try {
    body = JSON.parse(response.body);
  } catch {
    problems.push(`body is not JSON: ${JSON.stringify(response.body.slice(0, 100))}`);
    return problems;
  }
  const error = body.error;
  if (typeof error?.message !== 'string' || error.message === '') problems.push('no error.message');
  // The unified body has the status as error.code; an unknown or revoked key gets OpenAI's
  // authentication shape instead (DESIGN.md), with a string code and a type.
  const openAiAuth = status === 401 && error?.type === 'authentication_error' && typeof error.code === 'string';
  if (error?.code !== status && !openAiAuth) problems.push(`error.code ${JSON.stringify(error?.code)}`);
  if (error?.request_id !== requestId) problems.push(`error.request_id ${JSON.stringify(error?.request_id)} is not the header's ${requestId}`);
  return problems;
}
