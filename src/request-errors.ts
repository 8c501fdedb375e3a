// Refusals of a request's form: its bytes, head and body, before any route reads it
// (malformed JSON or HTTP, codings, timeouts, sizes). Part of the error family (errors.ts).
import { LmgateError } from './lmgate-error.js';

export class MalformedJsonError extends LmgateError {
  readonly code = 'malformed_json';

  constructor(cause?: unknown) {
    super('malformed JSON body', { cause });
  }
}

/**
 * The request is not usable HTTP: refused by Node's parser (framing, header syntax), by
 * the router (bad URL encoding), or because a field that may appear once appears twice.
 */
export type MalformedRequestReason =
  | { kind: 'http' }
  | { kind: 'url' }
  | { kind: 'duplicate_header'; header: string }
  | { kind: 'transfer_coding'; coding: string }
  /** An HTTP/1.1 request without Host (RFC 9112 §3.2). */
  | { kind: 'missing_host' };

export class MalformedRequestError extends LmgateError {
  readonly code = 'malformed_request';

  constructor(readonly reason: MalformedRequestReason) {
    super(`malformed request: ${reason.kind}`);
  }
}

/** `Expect` asks for something other than 100-continue, the only expectation HTTP defines. */
export class ExpectationFailedError extends LmgateError {
  readonly code = 'expectation_failed';

  constructor(readonly expectation: string) {
    super(`unsupported expectation ${expectation}`);
  }
}

/** The body is compressed (Content-Encoding); request bodies are read as they are. */
export class UnsupportedContentEncodingError extends LmgateError {
  readonly code = 'unsupported_content_encoding';

  constructor(readonly encoding: string) {
    super(`unsupported content encoding ${encoding}`);
  }
}

/** The request was not received in full within the server's timeouts. */
export class RequestTimeoutError extends LmgateError {
  readonly code = 'request_timeout';

  constructor() {
    super('request not received in time');
  }
}

/** The request line (URL), or a path parameter in it, is over its bound. */
export class UriTooLongError extends LmgateError {
  readonly code = 'uri_too_long';

  constructor() {
    super('request URL too long');
  }
}

/** The header section is over Node's header size limit. */
export class HeadersTooLargeError extends LmgateError {
  readonly code = 'headers_too_large';

  constructor() {
    super('request headers too large');
  }
}

export class UnsupportedMediaTypeError extends LmgateError {
  readonly code = 'unsupported_media_type';

  constructor(readonly contentType: string | undefined) {
    super(`unsupported content type ${contentType ?? '(none)'}`);
  }
}

/** A bound on a body's structure that it went past (http/json-bounds.ts). */
export interface StructureBound {
  kind: 'json_values' | 'json_depth';
  limit: number;
}

/** The body is over the byte limit, or, when `bound` is set, over a bound on its structure. */
export class PayloadTooLargeError extends LmgateError {
  readonly code = 'payload_too_large';

  constructor(readonly bound?: StructureBound) {
    super(bound ? `body over the ${bound.kind} limit of ${bound.limit}` : 'body over the configured limit');
  }
}
