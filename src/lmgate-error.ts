// The base of every error of lmgate's (errors.ts): a code from one union, which the
// error table renders.

export abstract class LmgateError extends Error {
  /** One of `ErrorCode` (errors.ts); each subclass names its own literal. */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
