// The one way the app talks to /api/dashboard: JSON in and out, the session's CSRF token on
// every state-changing call, failures as ApiError, and a 401 ends the session in the app.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Validation messages by field name (422). */
    readonly fields: Record<string, string> = {},
    /** From Retry-After on 429. */
    readonly retryAfterSec: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface CallOptions {
  method?: Method;
  body?: unknown;
  /** A 401 here is an answer (a wrong password), not a session that ended. */
  expectUnauthenticated?: boolean;
}

let csrfToken: string | null = null;
let onUnauthenticated: () => void = () => undefined;

/** The token from /session, /signin or /signup; null once signed out. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called whenever the server says the session is gone, so the app can ask to sign in. */
export function whenUnauthenticated(handler: () => void): void {
  onUnauthenticated = handler;
}

export async function api<T>(path: string, options: CallOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== null) headers['x-csrf-token'] = csrfToken;

  let response: Response;
  try {
    // The admin API's calls name their whole path (/api/admin/v1/...).
    response = await fetch(path.startsWith('/api/') ? path : `/api/dashboard${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'The server could not be reached. Check your connection and try again.');
  }

  if (response.status === 401 && options.expectUnauthenticated !== true) {
    csrfToken = null;
    onUnauthenticated();
  }
  if (!response.ok) throw await readError(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

async function readError(response: Response): Promise<ApiError> {
  const retryAfter = Number(response.headers.get('retry-after'));
  const retryAfterSec = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null;
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const error = isRecord(body) && isRecord(body.error) ? body.error : {};
  const message =
    typeof error.message === 'string' && error.message !== ''
      ? error.message
      : `Something went wrong (HTTP ${response.status}). Please try again.`;
  return new ApiError(response.status, message, isRecord(body) ? fieldMessages(body.errors) : {}, retryAfterSec);
}

/** 422 details come as [{ field, message }] or as { field: [messages] }; the first message per field is shown. */
function fieldMessages(errors: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (Array.isArray(errors)) {
    for (const entry of errors) {
      if (isRecord(entry) && typeof entry.field === 'string' && typeof entry.message === 'string') fields[entry.field] ??= entry.message;
    }
  } else if (isRecord(errors)) {
    for (const [field, messages] of Object.entries(errors)) {
      const first: unknown = Array.isArray(messages) ? messages[0] : messages;
      if (typeof first === 'string') fields[field] = first;
    }
  }
  return fields;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
