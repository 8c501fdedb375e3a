// Redemption codes: `LMG-XXXX-XXXX-XXXX`, 12 random Crockford base32 characters (60 bits).
// Crockford's alphabet has no I, L, O or U, and reading treats I/L as 1 and O as 0, so a
// code read aloud or retyped still redeems. Only the SHA-256 of the canonical form is
// stored: the code itself is shown once, when it is created.
import { createHash, randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const PREFIX = 'LMG';
const GROUPS = 3;
const GROUP_LENGTH = 4;

export function generateRedemptionCode(): string {
  // 256 is a multiple of 32, so the low five bits of a random byte are uniform.
  const chars = [...randomBytes(GROUPS * GROUP_LENGTH)].map((byte) => CROCKFORD[byte & 31]!);
  return format(chars.join(''));
}

/** The code as stored (hashed), or undefined when the text cannot be a code at all. */
export function canonicalRedemptionCode(text: string): string | undefined {
  let body = text.toUpperCase().replace(/[\s-]+/g, '');
  if (body.startsWith(PREFIX)) body = body.slice(PREFIX.length);
  body = body.replace(/O/g, '0').replace(/[IL]/g, '1');
  if (body.length !== GROUPS * GROUP_LENGTH || ![...body].every((c) => CROCKFORD.includes(c))) return undefined;
  return format(body);
}

/** Enough of a code to tell it from others in a list, too little to redeem it: `LMG-…-7K3Q`. */
export function redemptionCodeHint(canonical: string): string {
  return `${PREFIX}-…-${canonical.slice(-GROUP_LENGTH)}`;
}

export function hashRedemptionCode(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex');
}

function format(body: string): string {
  const groups = Array.from({ length: GROUPS }, (_, i) => body.slice(i * GROUP_LENGTH, (i + 1) * GROUP_LENGTH));
  return [PREFIX, ...groups].join('-');
}
