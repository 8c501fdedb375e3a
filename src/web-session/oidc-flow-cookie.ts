// What a sign-in with OpenID Connect must remember between sending the browser to the
// provider and its return: the PKCE code verifier, the state, the nonce and the page to
// land on. Kept in the browser (no store round trip, works on any instance) in a cookie
// sealed with AES-256-GCM: the browser can neither read the verifier nor forge the state.
// The key is derived from the client secret, which every instance holds already, so no
// further secret needs configuring; a changed secret only ends flows under way.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export const OIDC_FLOW_COOKIE = 'lmgate_oidc_flow';
/** Only the callback reads it; nothing else on the site is sent it. */
export const OIDC_FLOW_COOKIE_PATH = '/api/dashboard/sign-in/oidc';
/** Long enough to sign in at the provider (a password, a second factor), short enough to be useless when stolen. */
export const OIDC_FLOW_TTL_MS = 10 * 60 * 1000;

export interface OidcFlow {
  codeVerifier: string;
  state: string;
  nonce: string;
  /** A path of this site to land on once signed in. */
  next: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class OidcFlowSeal {
  private readonly key: Buffer;

  constructor(clientSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', clientSecret, 'lmgate', 'oidc flow cookie v1', 32));
  }

  seal(flow: OidcFlow, nowMs = Date.now()): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const plain = Buffer.from(JSON.stringify({ ...flow, expiresAtMs: nowMs + OIDC_FLOW_TTL_MS }));
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The flow, or undefined when the cookie is missing, altered, sealed with another key or expired. */
  open(value: string | undefined, nowMs = Date.now()): OidcFlow | undefined {
    if (!value) return undefined;
    const bytes = Buffer.from(value, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      const flow = JSON.parse(plain.toString('utf8')) as Partial<OidcFlow & { expiresAtMs: number }>;
      if (typeof flow.expiresAtMs !== 'number' || flow.expiresAtMs <= nowMs) return undefined;
      const { codeVerifier, state, nonce, next } = flow;
      if (typeof codeVerifier !== 'string' || typeof state !== 'string' || typeof nonce !== 'string' || typeof next !== 'string') return undefined;
      return { codeVerifier, state, nonce, next };
    } catch {
      // An authentication tag that does not match: altered, or sealed with another key.
      return undefined;
    }
  }
}
