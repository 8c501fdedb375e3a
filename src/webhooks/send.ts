// One delivery attempt over HTTP: the event's body POSTed with Standard Webhooks' headers,
// a bounded wait, no redirects followed (a receiver answers where it was registered). Any
// 2xx is a delivery; everything else (another status, a refused connection, no answer in
// time) is a failed attempt, said in words for the dashboard.
import { fetch, type Agent } from 'undici';
import { assertPublicHost, PrivateAddressError } from './address-guard.js';
import { signWebhook } from './signature.js';

export interface WebhookRequest {
  url: string;
  /** The event id: the same on every attempt, so receivers can drop duplicates. */
  id: string;
  timestampSec: number;
  body: string;
  /** Each signs; all are sent (the previous one during a rotation). */
  secrets: readonly string[];
}

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

const USER_AGENT = 'lmgate-webhooks/1';
const MAX_ERROR_CHARS = 500;

export interface SendOptions {
  timeoutMs: number;
  /** Aborts it without an answer (the instance is stopping); the caller tells that apart. */
  stop: AbortSignal;
  /** Its connections (address-guard.ts). */
  agent: Agent;
  allowPrivateAddresses: boolean;
}

export async function sendWebhook(request: WebhookRequest, options: SendOptions): Promise<SendResult> {
  const { timeoutMs, stop } = options;
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  try {
    assertPublicHost(request.url, options.allowPrivateAddresses);
    const response = await fetch(request.url, {
      dispatcher: options.agent,
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': request.id,
        'webhook-timestamp': String(request.timestampSec),
        'webhook-signature': signWebhook(request.secrets, request.id, request.timestampSec, request.body),
      },
      body: request.body,
      signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stop]),
    });
    // The answer's body means nothing here; reading it lets the connection be reused.
    await response.body?.cancel().catch(() => undefined);
    const ok = response.status >= 200 && response.status < 300;
    return { statusCode: response.status, error: ok ? null : `answered HTTP ${response.status}`, durationMs: elapsed() };
  } catch (err) {
    return { statusCode: null, error: describeFailure(err, timeoutMs).slice(0, MAX_ERROR_CHARS), durationMs: elapsed() };
  }
}

function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof PrivateAddressError) return err.message;
  const name = (err as { name?: string } | null)?.name;
  if (name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  if (name === 'AbortError') return 'stopped';
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (cause instanceof PrivateAddressError) return cause.message;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ENOTFOUND') return 'host not found';
  return cause?.message ?? (err instanceof Error ? err.message : String(err));
}
