import { errorCodes } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ClientGoneError, ForbiddenError, RateLimitedError, Refusal, RouteNotFoundError, ValidationError } from '../../src/errors.js';
import { logLevelOf, renderError, statusOf } from '../../src/http/error-reply.js';
import { API_ERRORS, type ErrorTable } from '../../src/http/error-table.js';

describe('the error table', () => {
  it('has one row per code: a table without one does not compile', () => {
    const { key_revoked: _dropped, ...rest } = API_ERRORS;
    // @ts-expect-error: 'key_revoked' is missing, and ErrorTable requires every code.
    const incomplete: ErrorTable = rest;
    expect(Object.keys(incomplete)).not.toContain('key_revoked');
  });

  it('renders the unified body with the status as numeric code and the request id last', () => {
    const reply = renderError(new ForbiddenError('model_not_in_tier'), 'req_1');
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({
      error: { message: 'You do not have permission to access this resource.', code: 403, reason: 'model_not_in_tier', request_id: 'req_1' },
    });
  });

  it('puts headers and top-level fields where the row says', () => {
    const reply = renderError(new RateLimitedError({ limit: 60, remaining: 0, resetAtUnixSec: 1_700_000_000 }, 7), 'req_2');
    expect(reply.status).toBe(429);
    expect(reply.headers['retry-after']).toBe('7');
    expect(reply.headers['x-ratelimit-limit']).toBe('60');
    expect(reply.body.retry_after).toBe(7);
  });

  it('gives the dashboard its own words where they differ, and the API’s elsewhere', () => {
    expect(renderError(new RouteNotFoundError('/x'), 'r', 'api').body.error).toMatchObject({ message: 'Model not found.' });
    expect(renderError(new RouteNotFoundError('/x'), 'r', 'dashboard').body.error).toMatchObject({ message: 'Not found.' });
    const fields = new ValidationError({ email: ['is required', 'must be an email'] });
    expect(renderError(fields, 'r', 'api').body.errors).toEqual({ email: ['is required', 'must be an email'] });
    expect(renderError(fields, 'r', 'dashboard').body.errors).toEqual([
      { field: 'email', message: 'is required' },
      { field: 'email', message: 'must be an email' },
    ]);
    expect(renderError(new Refusal('code_expired'), 'r', 'dashboard').status).toBe(410);
  });

  it('makes a client that went away a 499 logged at debug, and anything unknown a logged 500', () => {
    expect(statusOf(new ClientGoneError())).toBe(499);
    expect(logLevelOf(new ClientGoneError())).toBe('debug');
    expect(statusOf(new TypeError('boom'))).toBe(500);
    expect(logLevelOf(new TypeError('boom'))).toBe('error');
    expect(renderError(new TypeError('secret detail'), 'r').body.error).toEqual({
      message: 'An unexpected error occurred. Please try again later.',
      code: 500,
      request_id: 'r',
    });
  });

  it('gives every row a status between 400 and 599 and a message', () => {
    for (const render of Object.values(API_ERRORS)) {
      // Rows read only fields their error carries; a bare object is enough for the status.
      const row = (render as (err: unknown) => { status: number; message: string })({
        reason: 'x', allow: [], fields: {}, state: { limit: 1, remaining: 0, resetAtUnixSec: 0 }, retryAfterSec: 1, kind: 'http', upstream: { status: 400, message: 'm', fields: {} },
      });
      expect(row.status).toBeGreaterThanOrEqual(400);
      expect(row.status).toBeLessThan(600);
      expect(row.message.length).toBeGreaterThan(0);
    }
  });

  it('renders every framework refusal (each FST_ERR_* with a 4xx status) as a 4xx, never as an unexpected 500', () => {
    const refusals = Object.entries(errorCodes)
      .map(([code, make]) => [code, new (make as new (...args: string[]) => Error & { statusCode?: number })('a', 'b', 'c')] as const)
      .filter(([, err]) => err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500);
    expect(refusals.length).toBeGreaterThan(10);
    for (const [code, err] of refusals) {
      const reply = renderError(err, 'req_1');
      expect(reply.status, code).toBeGreaterThanOrEqual(400);
      expect(reply.status, code).toBeLessThan(500);
      expect(logLevelOf(err), code).not.toBe('error');
    }
  });

  it('a client that left while its body was being sent is a client gone, logged at debug, not an unexpected error', () => {
    const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET', statusCode: 400 });
    expect(statusOf(aborted)).toBe(499);
    expect(logLevelOf(aborted)).toBe('debug');
  });
});
