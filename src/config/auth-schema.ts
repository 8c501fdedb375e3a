// Sign-in settings beyond passwords: OpenID Connect against the operator's identity
// provider. Its own module so the main schema stays one page per concern; schema.ts
// mounts it as `auth`.
import { z } from 'zod';

/** The roles an organisation's member can have (DESIGN: organisations). */
export const ORGANISATION_ROLES = ['owner', 'admin', 'billing', 'member'] as const;
export type OrganisationRole = (typeof ORGANISATION_ROLES)[number];

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Plain http only to a provider on this machine (a test or a local provider); tokens never cross a network in clear. */
export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

const oidc = z
  .object({
    issuer: z
      .string()
      .url()
      .refine((value) => {
        const url = new URL(value);
        return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(url));
      }, 'must be an https URL (plain http only on loopback)'),
    client_id: z.string().min(1),
    // The NAME of the variable holding the client secret; the secret itself is never in the file.
    client_secret_env: z.string().min(1).default('LMGATE_OIDC_CLIENT_SECRET'),
    // Email domains allowed to sign in ("example.com"); empty: any address the provider verified.
    allowed_domains: z.array(z.string().min(1).transform((domain) => domain.toLowerCase().replace(/^@/, ''))).default([]),
    // The organisation (name or id) and role a person joins at their first sign-in.
    first_sign_in: z.object({ org: z.string().min(1), role: z.enum(ORGANISATION_ROLES).default('member') }).strict().optional(),
    button_label: z.string().min(1).max(60).default('Sign in with SSO'),
  })
  .strict();

export const authSchema = z.object({ oidc: oidc.optional() }).strict().prefault({});

export type OidcConfig = z.output<typeof oidc>;
