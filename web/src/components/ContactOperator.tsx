import type { ReactNode } from 'react';
import { useSession } from '../session';

/** "Contact the operator", as a link when the operator configured how (`contact`: an email address or a URL). */
export function ContactOperator({ children = 'contact the operator' }: { children?: ReactNode }) {
  const { config } = useSession();
  const contact = config.contact;
  if (contact === null) return <>{children}</>;
  const href = /^https?:\/\//i.test(contact) ? contact : contact.includes('@') && !contact.includes(':') ? `mailto:${contact}` : null;
  if (href === null) return <>{children} ({contact})</>;
  return (
    <>
      {children} (<a href={href}>{contact}</a>)
    </>
  );
}
