// Where customers reach the operator: `support: { email, url }`, or the older `contact`
// shorthand read as whichever of the two it looks like. The dashboard shows it wherever it
// tells a customer to contact the operator.
import type { Config } from './schema.js';

export interface SupportContact {
  email: string | null;
  url: string | null;
}

export function supportContact(config: Pick<Config, 'support' | 'contact'>): SupportContact {
  const email = config.support?.email ?? null;
  const url = config.support?.url ?? null;
  if (email !== null || url !== null || config.contact === undefined) return { email, url };
  if (/^https?:\/\//i.test(config.contact)) return { email: null, url: config.contact };
  return { email: config.contact, url: null };
}
