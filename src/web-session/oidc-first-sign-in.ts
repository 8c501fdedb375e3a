// A person's first sign-in through the provider may make them a member of an organisation
// (`auth.oidc.first_sign_in: { org, role }`). Only for an account made at that sign-in: an
// existing account that links its identity keeps the memberships and roles it has (adding
// it again could change an owner into a member). The organisations' own command does the
// adding (commands/orgs.ts), handed in as a callback so this rule is tested on its own.
import type { OidcConfig, OrganisationRole } from '../config/auth-schema.js';
import type { OrgCommands } from '../commands/orgs.js';
import type { Account, Store } from '../store/store.js';

/** Adds the person to the organisation (its id or name) with the role; resolves to the organisation's id. */
export type AddOrganisationMember = (org: string, person: Account, role: OrganisationRole) => Promise<string>;

/** The organisation joined (its id: the first session acts for it), or undefined when none is configured. */
export async function joinOnFirstSignIn(firstSignIn: OidcConfig['first_sign_in'], addMember: AddOrganisationMember | undefined, person: Account): Promise<string | undefined> {
  if (firstSignIn === undefined || addMember === undefined) return undefined;
  return addMember(firstSignIn.org, person, firstSignIn.role);
}

/** The organisations' command as a first sign-in uses it: the organisation found by id or name. */
export function addMemberThroughOrgs(store: Pick<Store, 'findOrg'>, orgs: Pick<OrgCommands, 'setMember'>): AddOrganisationMember {
  return async (org, person, role) => {
    const found = await store.findOrg(org);
    if (found === undefined) throw new Error(`auth.oidc.first_sign_in.org names no organisation: ${org}`);
    await orgs.setMember(found.id, person, role);
    return found.id;
  };
}
