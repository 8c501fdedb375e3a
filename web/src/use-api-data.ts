// Reads one GET endpoint for a page: the data, the error, and a way to read it again.
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from './api';

export interface ApiData<T> {
  data: T | undefined;
  error: ApiError | undefined;
  reload(): void;
  /** For answers that already carry the new state (a revoked key, a new balance). */
  setData(update: (current: T | undefined) => T | undefined): void;
}

/** A null path reads nothing (a section that is not there). */
export function useApiData<T>(path: string | null): ApiData<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [version, setVersion] = useState(0);

  useEffect(() => {
    if (path === null) return;
    let cancelled = false;
    setError(undefined);
    api<T>(path).then(
      (value) => {
        if (!cancelled) setData(value);
      },
      (err: unknown) => {
        if (!cancelled) setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      },
    );
    return () => {
      cancelled = true;
    };
  }, [path, version]);

  const reload = useCallback(() => setVersion((n) => n + 1), []);
  return { data, error, reload, setData };
}
