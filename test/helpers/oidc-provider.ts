// A real OpenID provider on loopback (panva's oidc-provider, the certified one) for the
// sign-in suites: one confidential client whose redirect URI is lmgate's callback, PKCE
// required, people whose claims a test sets and changes, and its development login and
// consent pages, which `signInAt` fills in over HTTP as a browser would.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export const OIDC_CLIENT_ID = 'lmgate-test';
export const OIDC_CLIENT_SECRET = 'a-client-secret-for-the-test-provider-only';

export interface TestPerson {
  email: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestProvider {
  /** http://127.0.0.1:PORT, the issuer. */
  issuer: string;
  /** By login (their subject): change one between sign-ins to see what lmgate keeps. */
  people: Map<string, TestPerson>;
  /** Registers lmgate's callbacks (known once lmgate listens) and starts answering. */
  start(...redirectUris: string[]): void;
  close(): Promise<void>;
}

/** Listens at once (lmgate's config needs the issuer), answers once `start` gave it the redirect URI. */
export async function listenOidcProvider(): Promise<TestProvider> {
  let handle: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handle) return handle(req, res);
    res.statusCode = 503;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const people = new Map<string, TestPerson>();
  return {
    issuer,
    people,
    start(...redirectUris) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: OIDC_CLIENT_ID,
            client_secret: OIDC_CLIENT_SECRET,
            redirect_uris: redirectUris,
            response_types: ['code'],
            grant_types: ['authorization_code'],
            token_endpoint_auth_method: 'client_secret_post',
          },
        ],
        // PKCE for every client, confidential ones included: a code without its verifier is refused.
        pkce: { required: () => true },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        cookies: { keys: ['cookie-key-for-the-test-provider'] },
        ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
        findAccount: async (_ctx, id) => {
          const person = people.get(id);
          if (!person) return undefined;
          return { accountId: id, claims: async () => ({ sub: id, ...person }) };
        },
      });
      handle = provider.callback();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Cookies by name, as one browser holds them for one site (paths ignored: the names differ). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const name = pair!.slice(0, pair!.indexOf('='));
      const value = pair!.slice(pair!.indexOf('=') + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  delete(name: string): void {
    this.cookies.delete(name);
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Follows the provider's pages from the authorization URL as a browser would: signs in as
 * `login` (or declines), consents, and returns the address the provider sends back to
 * (lmgate's callback with its code and state), without visiting it.
 */
export async function signInAt(authorizationUrl: string, login: string, options: { decline?: boolean; callbackPrefix: string }): Promise<URL> {
  const jar = new CookieJar();
  let url = new URL(authorizationUrl);
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form,
    });
    jar.take(response);
    form = undefined;
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get('location')!, url);
      if (url.href.startsWith(options.callbackPrefix)) return url;
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`provider answered ${response.status}: ${page.slice(0, 300)}`);
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (!prompt || !action) throw new Error(`no interaction form on ${url.pathname}`);
    if (options.decline) {
      url = new URL(`${url.pathname}/abort`, url);
      continue;
    }
    url = new URL(action, url);
    form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
  }
  throw new Error('the provider never sent the browser back');
}
