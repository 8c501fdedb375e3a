// The row type of `oidc_identities` (migration 0017), kept beside tables.ts so the
// sign-in's storage is one small room of its own.

/** A person's identity at an OpenID provider, linked to their lmgate account. */
export interface OidcIdentitiesTable {
  issuer: string;
  subject: string; // the provider's `sub`: stable, unlike the email address
  account_id: string;
  email: string; // the address the provider last gave, for the operator's eyes
  created_at: string;
  last_sign_in_at: string;
}

export interface OidcIdentityTables {
  oidc_identities: OidcIdentitiesTable;
}
