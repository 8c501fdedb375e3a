// A person's first sign-in through the provider may make them a member of an organisation
// (`auth.oidc.first_sign_in: { org, role }`). Only for an account made at that sign-in: an
// existing account that links its identity keeps the memberships and roles it has (adding
// it again could change an owner into a member). The organisations' own command does the
// adding (commands/orgs.ts), handed in as a callback so this rule is tested on its own.
import type { OidcConfig, OrganisationRole } from '../config/auth-schema.js';
import type { OrgCommands } from '../commands/orgs.js';
import type { Account, Store } from '../store/store.js';

/** Adds the person to the organisation (its id or name) with the role. */
export type AddOrganisationMember = (org: string, person: Account, role: OrganisationRole) => Promise<unknown>;

/** Whether a join was asked for, and done. */
export type FirstSignInJoin = 'none' | 'joined';

export async function joinOnFirstSignIn(firstSignIn: OidcConfig['first_sign_in'], addMember: AddOrganisationMember | undefined, person: Account): Promise<FirstSignInJoin> {
  if (firstSignIn === undefined || addMember === undefined) return 'none';
  await addMember(firstSignIn.org, person, firstSignIn.role);
  return 'joined';
}

/** The organisations' command as a first sign-in uses it: the organisation found by id or name. */
export function addMemberThroughOrgs(store: Pick<Store, 'findOrg'>, orgs: Pick<OrgCommands, 'setMember'>): AddOrganisationMember {
  return async (org, person, role) => {
    const found = await store.findOrg(org);
    if (found === undefined) throw new Error(`auth.oidc.first_sign_in.org names no organisation: ${org}`);
    await orgs.setMember(found.id, person, role);
  };
}
