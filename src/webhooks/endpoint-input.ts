// What an endpoint may be registered with: an http(s) URL without credentials in it, and
// a non-empty list of known event types. Checked here for every surface (dashboard, CLI).
import { ValidationError } from '../errors.js';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './events.js';

const MAX_URL_CHARS = 2000;

export function parseEndpointUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ValidationError({ url: ['Give a full URL, such as https://example.com/webhooks.'] });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ValidationError({ url: ['The URL must start with https:// or http://.'] });
  if (url.username || url.password) throw new ValidationError({ url: ['The URL must not hold a user name or password.'] });
  if (url.href.length > MAX_URL_CHARS) throw new ValidationError({ url: [`The URL must be at most ${MAX_URL_CHARS} characters.`] });
  return url.href;
}

export function parseEventTypes(types: readonly string[]): WebhookEventType[] {
  const unknown = types.filter((type) => !isWebhookEventType(type));
  if (unknown.length > 0) throw new ValidationError({ eventTypes: [`Unknown event type ${unknown.join(', ')}: choose among ${WEBHOOK_EVENT_TYPES.join(', ')}.`] });
  const known = [...new Set(types)].filter(isWebhookEventType);
  if (known.length === 0) throw new ValidationError({ eventTypes: ['Choose at least one event type.'] });
  return known;
}
