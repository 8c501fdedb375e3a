// Sign-in with OpenID Connect (the authorization code flow with PKCE S256, state and nonce),
// through openid-client: `begin` sends the browser to the provider, `finish` verifies its
// return and gives the person the provider vouches for. The provider's metadata is
// discovered once and kept (a failed discovery is retried by the next sign-in). What is
// refused is an OidcSignInRefusal whose reason the sign-in page turns into words.
import { timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import { isLoopbackUrl, type OidcConfig } from '../config/auth-schema.js';
import { OidcFlowSeal, type OidcFlow } from './oidc-flow-cookie.js';

/** Why a sign-in through the provider was refused; the sign-in page says each in words. */
export type OidcRefusalReason =
  | 'expired' // no flow cookie, or an altered or expired one: the sign-in was not started here, or too long ago
  | 'state' // the provider's answer belongs to another sign-in
  | 'denied' // the person (or the provider) declined
  | 'unverified' // the provider has not verified the address
  | 'domain' // the address is outside auth.oidc.allowed_domains
  | 'taken' // the address's account is linked to another person at the provider
  | 'no_account' // no account for the address, and none is made at first sign-in
  | 'failed'; // the provider's answer did not verify (nonce, PKCE, signature), or it could not be reached

export class OidcSignInRefusal extends Error {
  constructor(
    readonly reason: OidcRefusalReason,
    options?: { cause?: unknown },
  ) {
    super(`OpenID Connect sign-in refused: ${reason}`, options);
  }
}

/** Who the provider says signed in, with an address it verified. */
export interface OidcPerson {
  issuer: string;
  subject: string;
  email: string;
  name: string | null;
}

const SCOPE = 'openid email profile';

export class OidcSignIn {
  private readonly seal: OidcFlowSeal;
  private discovered: Promise<client.Configuration> | undefined;

  constructor(
    readonly config: OidcConfig,
    private readonly clientSecret: string,
  ) {
    this.seal = new OidcFlowSeal(clientSecret);
  }

  /** The provider's address to send the browser to, and the sealed flow cookie to set. */
  async begin(redirectUri: string, next: string): Promise<{ url: URL; cookie: string }> {
    const configuration = await this.configuration();
    const flow: OidcFlow = { codeVerifier: client.randomPKCECodeVerifier(), state: client.randomState(), nonce: client.randomNonce(), next };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: SCOPE,
      code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url, cookie: this.seal.seal(flow) };
  }

  /** The flow a cookie holds, if it is intact and recent (its `next` is needed even for a refusal). */
  openFlow(cookie: string | undefined): OidcFlow | undefined {
    return this.seal.open(cookie);
  }

  /**
   * Verifies the provider's return to `callbackUrl` (the redirect URI with the provider's
   * query) against the flow: state, the code exchanged with the PKCE verifier, the ID
   * token's signature, issuer, audience and nonce; then the address and its domain.
   */
  async finish(callbackUrl: URL, flow: OidcFlow | undefined): Promise<OidcPerson> {
    if (flow === undefined) throw new OidcSignInRefusal('expired');
    const returnedState = callbackUrl.searchParams.get('state') ?? '';
    if (!sameText(returnedState, flow.state)) throw new OidcSignInRefusal('state');
    const error = callbackUrl.searchParams.get('error');
    if (error !== null) throw new OidcSignInRefusal(error === 'access_denied' ? 'denied' : 'failed');
    const configuration = await this.configuration();
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (idClaims === undefined) throw new OidcSignInRefusal('failed');
      claims = { ...idClaims };
      // Providers that follow OIDC Core 5.4 strictly put scope claims in the UserInfo
      // answer, not the ID token, when an access token is issued.
      if (typeof claims.email !== 'string') {
        claims = { ...(await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub)), ...claims };
      }
    } catch (err) {
      if (err instanceof OidcSignInRefusal) throw err;
      if (err instanceof client.AuthorizationResponseError && err.error === 'access_denied') throw new OidcSignInRefusal('denied', { cause: err });
      throw new OidcSignInRefusal('failed', { cause: err });
    }
    return this.person(configuration.serverMetadata().issuer, claims);
  }

  private person(issuer: string, claims: Record<string, unknown>): OidcPerson {
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    const subject = typeof claims.sub === 'string' ? claims.sub : '';
    if (subject === '' || !email.includes('@')) throw new OidcSignInRefusal('failed');
    // Some providers send "true" as a string (AWS Cognito did for years).
    if (claims.email_verified !== true && claims.email_verified !== 'true') throw new OidcSignInRefusal('unverified');
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    const allowed = this.config.allowed_domains;
    if (allowed.length > 0 && !allowed.includes(domain)) throw new OidcSignInRefusal('domain');
    return { issuer, subject, email, name: typeof claims.name === 'string' && claims.name.trim() !== '' ? claims.name.trim().slice(0, 200) : null };
  }

  private configuration(): Promise<client.Configuration> {
    if (this.discovered === undefined) {
      const issuer = new URL(this.config.issuer);
      this.discovered = client.discovery(issuer, this.config.client_id, this.clientSecret, undefined, {
        // The schema allows plain http only for a provider on loopback.
        execute: issuer.protocol === 'http:' && isLoopbackUrl(issuer) ? [client.allowInsecureRequests] : [],
      });
      this.discovered.catch(() => {
        this.discovered = undefined;
      });
    }
    return this.discovered;
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
