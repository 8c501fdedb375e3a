// The request path stays synchronous while everything it needs is in memory (a cached
// key, a loaded balance, a short prompt): an await there costs more than the step itself.
// Steps that are only sometimes asynchronous return a MaybePromise, chained with andThen.

export type MaybePromise<T> = T | Promise<T>;

/** `next(value)`, at once when `value` is not a promise. A synchronous throw stays synchronous. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * `next(step())`, or `failed(err)` when the step throws or its promise rejects; at once
 * when the step is synchronous.
 */
export function attempt<T, U>(step: () => MaybePromise<T>, next: (value: T) => MaybePromise<U>, failed: (err: unknown) => MaybePromise<U>): MaybePromise<U> {
  let value: MaybePromise<T>;
  try {
    value = step();
  } catch (err) {
    return failed(err);
  }
  return value instanceof Promise ? value.then(next, failed) : next(value);
}
