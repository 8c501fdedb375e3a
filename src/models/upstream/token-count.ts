// /v1/messages/count_tokens asked of the upstream itself, for deployments that say
// `count_tokens: native`: Anthropic's API counts a Messages request exactly, and so does
// llama.cpp's server (its template, default system prompt and tools included), where
// lmgate can only estimate. Unmetered, and never in the way: any failure is undefined, and
// the caller estimates instead.
import { isCount, isRecord } from './wire.js';
import type { Deployment } from './deployment.js';

/** The members of a Messages request that its count reads (count_tokens refuses max_tokens and the sampling ones). */
const COUNTED_FIELDS = ['messages', 'system', 'tools', 'tool_choice', 'thinking'] as const;

export async function countTokensUpstream(deployment: Deployment, request: Record<string, unknown>): Promise<number | undefined> {
  const body: Record<string, unknown> = { model: deployment.config.model };
  for (const field of COUNTED_FIELDS) if (request[field] !== undefined) body[field] = request[field];
  const { connectMs, firstByteMs } = deployment.config.timeouts;
  try {
    const answer = await deployment.pool.request({
      path: deployment.countTokensPath,
      method: 'POST',
      headers: deployment.jsonHeaders,
      body: JSON.stringify(body),
      headersTimeout: Math.min(firstByteMs, connectMs + 10_000),
      bodyTimeout: firstByteMs,
    });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) return undefined;
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) && isCount(parsed.input_tokens) ? parsed.input_tokens : undefined;
  } catch {
    return undefined;
  }
}
