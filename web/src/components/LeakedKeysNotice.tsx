// Keys someone reported found in public, which lmgate revoked: the account hears of it
// where it looks first, with where the key was found, for thirty days.
import { formatDateTime } from '../format';
import type { ApiKey, KeyList } from '../types';
import { useApiData } from '../use-api-data';
import { Notice } from './Notice';

const SHOWN_FOR_MS = 30 * 24 * 60 * 60 * 1000;

export function LeakedKeysNotice({ keys }: { keys: ApiKey[] }) {
  const recent = keys.filter((key) => key.leaked && key.revokedAt !== null && Date.now() - Date.parse(key.revokedAt) < SHOWN_FOR_MS);
  if (recent.length === 0) return null;
  return (
    <Notice tone="error">
      {recent.map((key) => (
        <p key={key.id}>
          Your key “{key.name}” ({key.prefix}…{key.lastFour}) was found in public
          {key.leakUrl === null ? null : (
            <>
              {' '}
              at{' '}
              <a href={key.leakUrl} rel="noreferrer noopener" target="_blank">
                {key.leakUrl}
              </a>
            </>
          )}{' '}
          and was revoked on {formatDateTime(key.revokedAt!)}. Generate a new key and replace it wherever it was used.
        </p>
      ))}
    </Notice>
  );
}

/** The same notice on a page that does not load the keys itself. */
export function LeakedKeysAlert() {
  const keys = useApiData<KeyList>('/keys');
  return keys.data === undefined ? null : <LeakedKeysNotice keys={keys.data.keys} />;
}
