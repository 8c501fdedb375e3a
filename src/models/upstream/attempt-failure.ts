// What can go wrong with one deployment before the client has seen anything, and what the
// client is told when every deployment has gone wrong.
import { AttemptFailure, BadUpstreamError, NoBackendAvailableError, UpstreamTimeoutError, type LmgateError } from '../../errors.js';

/** A failure after the first chunk: the stream ends with it, no other deployment is tried. */
export function midStreamError(failure: AttemptFailure): LmgateError {
  return failure.kind === 'timeout'
    ? new UpstreamTimeoutError(failure.detail, { cause: failure })
    : new BadUpstreamError(failure.detail, { cause: failure }, failure.upstream);
}

/**
 * All deployments failed: a bad answer anywhere is 502, else a timeout 504, else nobody
 * could take the request (refused, reset, rate-limited, cooling down, full) 503.
 */
export function finalError(failures: readonly AttemptFailure[]): LmgateError {
  const last = failures.at(-1);
  if (last === undefined) return new NoBackendAvailableError('every deployment is cooling down or at its concurrency limit');
  const cause = failures.length === 1 ? last : new AggregateError(failures, 'every deployment failed');
  // For the log (the client sees the error table's words), with what the upstream said;
  // the causes name the deployments.
  const said = last.upstream === undefined ? '' : `: ${last.upstream.status} ${last.upstream.message}`;
  const summary = `${failures.length === 1 ? 'the deployment' : `all ${failures.length} deployments`} failed; last: ${last.detail}${said}`;
  const failed = failures.filter((failure) => failure.kind === 'bad_answer' || failure.kind === 'server_error');
  // The last deployment that said why tells the client.
  if (failed.length > 0) return new BadUpstreamError(summary, { cause }, failed.findLast((failure) => failure.upstream)?.upstream);
  if (failures.some((failure) => failure.kind === 'timeout')) return new UpstreamTimeoutError(summary, { cause });
  return new NoBackendAvailableError(summary, { cause });
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN']);
const BROKEN_CONNECTION_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED']);

/** What a transport error means. `isAnswering`: the response had begun. */
export function transportFailure(err: unknown, where: string, isTimedOut: boolean, isAnswering: boolean): AttemptFailure {
  if (err instanceof AttemptFailure) return err;
  if (isTimedOut) return new AttemptFailure('timeout', 'upstream exceeded its total time limit', where, err);
  const code = errorCode(err);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new AttemptFailure('timeout', 'upstream connect timed out', where, err);
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new AttemptFailure('timeout', 'upstream sent no answer in time', where, err);
  if (code === 'UND_ERR_BODY_TIMEOUT') return new AttemptFailure('timeout', 'upstream went idle', where, err);
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return new AttemptFailure('unreachable', 'upstream unreachable', where, err);
  if (code !== undefined && BROKEN_CONNECTION_CODES.has(code)) {
    return isAnswering
      ? new AttemptFailure('bad_answer', 'upstream connection broke mid-answer', where, err)
      : new AttemptFailure('unreachable', 'upstream closed the connection', where, err);
  }
  return new AttemptFailure('bad_answer', 'upstream request failed', where, err);
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Happy eyeballs (several addresses) reports an AggregateError of the attempts.
  if (err instanceof AggregateError) return errorCode(err.errors[0]);
  return undefined;
}
