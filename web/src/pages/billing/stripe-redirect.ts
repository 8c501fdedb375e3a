// Checkout and the Billing Portal are Stripe's pages: the server creates the session and
// answers its URL, and the whole browser goes there (Stripe sends it back afterwards).
import { api } from '../../api';
import type { Redirect } from '../../types';

export async function goToStripe(path: string, body?: unknown): Promise<void> {
  const { url } = await api<Redirect>(path, { method: 'POST', body });
  window.location.assign(url);
}
