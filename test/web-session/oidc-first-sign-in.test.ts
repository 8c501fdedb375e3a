// Joining an organisation at a first sign-in: the configured organisation and role, handed
// to the organisations' command; nothing when none is configured.
import { describe, expect, it } from 'vitest';
import type { Account } from '../../src/store/store.js';
import { addMemberThroughOrgs, joinOnFirstSignIn, type AddOrganisationMember } from '../../src/web-session/oidc-first-sign-in.js';

const ada = { id: 'acct_ada', email: 'ada@example.test' } as Account;
const acme = { id: 'acct_acme', email: 'acme@org.invalid' } as Account;

describe('joining an organisation at first sign-in', () => {
  it('adds the person to the configured organisation with the configured role', async () => {
    const added: Parameters<AddOrganisationMember>[] = [];
    const addMember: AddOrganisationMember = async (...args) => {
      added.push(args);
      return acme.id;
    };
    expect(await joinOnFirstSignIn({ org: 'acme', role: 'billing' }, addMember, ada)).toBe(acme.id);
    expect(added).toEqual([['acme', ada, 'billing']]);
  });

  it('does nothing without first_sign_in', async () => {
    const added: unknown[] = [];
    const addMember: AddOrganisationMember = async (...args) => {
      added.push(args);
      return acme.id;
    };
    expect(await joinOnFirstSignIn(undefined, addMember, ada)).toBeUndefined();
    expect(await joinOnFirstSignIn({ org: 'acme', role: 'member' }, undefined, ada)).toBeUndefined();
    expect(added).toEqual([]);
  });

  it('finds the organisation by id or name for the organisations\' command, and says when there is none', async () => {
    const calls: unknown[][] = [];
    const addMember = addMemberThroughOrgs(
      { findOrg: async (idOrName) => ([acme.id, 'acme'].includes(idOrName) ? acme : undefined) },
      { setMember: async (...args) => void calls.push(args) },
    );
    expect(await addMember('acme', ada, 'admin')).toBe(acme.id);
    await addMember(acme.id, ada, 'member');
    expect(calls).toEqual([
      [acme.id, ada, 'admin'],
      [acme.id, ada, 'member'],
    ]);
    await expect(addMember('gone', ada, 'member')).rejects.toThrow('auth.oidc.first_sign_in.org names no organisation: gone');
  });
});
