// Names for the ids an audit page mentions, so the log reads in words: an account's (or an
// operator's) email, a key's or an admin key's name. Each id is looked up once per page; one
// gone since reads as no name (its id is still there).
import type { AccountQueries, AuditQueries, KeyQueries } from '../store/queries.js';
import type { AuditEntry } from '../store/store.js';

type NameLookup = Pick<AccountQueries, 'findAccount'> & Pick<KeyQueries, 'findKeyById'> & Pick<AuditQueries, 'listAdminKeys'>;
type Named = { kind: string; id: string };

export async function auditNames(store: NameLookup, entries: readonly AuditEntry[]): Promise<(of: Named) => string | null> {
  const wanted = new Map<string, Named>();
  for (const entry of entries) for (const named of [entry.actor, entry.target]) wanted.set(`${named.kind}:${named.id}`, named);
  // Admin keys are few: one read names them all.
  const adminKeys = [...wanted.values()].some((named) => named.kind === 'admin_key') ? new Map((await store.listAdminKeys()).map((key) => [key.id, key.name])) : new Map<string, string>();
  const found = await Promise.all(
    [...wanted.entries()].map(async ([ref, named]) => [ref, named.kind === 'admin_key' ? (adminKeys.get(named.id) ?? null) : await nameOf(store, named)] as const),
  );
  const names = new Map(found);
  return (of) => names.get(`${of.kind}:${of.id}`) ?? null;
}

async function nameOf(store: NameLookup, { kind, id }: Named): Promise<string | null> {
  switch (kind) {
    case 'account':
    case 'operator':
    {
      const account = await store.findAccount(id);
      return (account?.kind === 'org' ? account.name : account?.email) ?? null;
    }
    case 'key':
      return (await store.findKeyById(id))?.name ?? null;
    default:
      return null;
  }
}
