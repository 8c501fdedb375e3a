import type { ApiError } from '../api';

/** What a section shows until its data is there: a quiet "Loading…" or the error with a retry. */
export function LoadState({ error, onRetry, label = 'Loading…' }: { error: ApiError | undefined; onRetry(): void; label?: string }) {
  if (error === undefined) {
    return (
      <p className="muted loading" aria-busy="true">
        {label}
      </p>
    );
  }
  return (
    <div className="notice error" role="alert">
      <p>{error.message}</p>
      <button type="button" className="button small" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}
