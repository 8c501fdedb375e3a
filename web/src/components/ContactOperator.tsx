import type { ReactNode } from 'react';
import { useSession } from '../session';

/** "Contact the operator", with their email address and support page as links when configured (`support`, or `contact`). */
export function ContactOperator({ children = 'contact the operator' }: { children?: ReactNode }) {
  const { email, url } = useSession().config.support;
  const links = [email && <a key="email" href={`mailto:${email}`}>{email}</a>, url && <a key="url" href={url}>{url}</a>].filter(Boolean);
  if (links.length === 0) return <>{children}</>;
  return (
    <>
      {children} ({links.length === 2 ? [links[0], ' or ', links[1]] : links[0]})
    </>
  );
}
