// Standard Webhooks signatures: a secret is `whsec_` + base64 of 24 random bytes; a message
// is signed with HMAC-SHA256 over `${id}.${timestamp}.${body}` keyed by the decoded secret,
// and sent as `v1,` + base64. Several signatures go space-separated (during a rotation the
// old secret signs beside the new one), and a receiver accepts any one that verifies.
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 24;

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The `webhook-signature` value: one `v1,` signature per secret. */
export function signWebhook(secrets: readonly string[], id: string, timestampSec: number, body: string): string {
  return secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSec}.${body}`).digest('base64')}`).join(' ');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}
