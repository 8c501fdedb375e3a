// The audit log in words: an action as a phrase, and a change as "field: before → after"
// per field, money in credits (fields in micro-credits end in _micros) rather than JSON.
import { formatCredits, formatDateTime, formatPlanName } from '../format';
import type { AuditValue } from './admin-api';

const ACTIONS: Record<string, string> = {
  'account.create': 'Created the account',
  'account.suspend': 'Suspended the account',
  'account.reactivate': 'Reactivated the account',
  'account.set_tier': 'Changed the tier',
  'account.set_price_multiplier': 'Changed the prices',
  'account.set_role': 'Changed the role',
  'account.set_password': 'Set the password',
  'key.create': 'Created a key',
  'key.update': 'Changed a key',
  'key.revoke': 'Revoked a key',
  'credits.grant': 'Granted credits',
  'credits.adjust': 'Adjusted credits',
  'codes.create': 'Created codes',
  'code.disable': 'Disabled a code',
  'admin_key.create': 'Created an admin key',
  'admin_key.revoke': 'Revoked an admin key',
};

/** Actions added later still read: "account.set_thing" → "Account set thing". */
export function formatAuditAction(action: string): string {
  return ACTIONS[action] ?? formatPlanName(action.replace(/[._]/g, ' '));
}

export interface AuditChange {
  field: string;
  before: string | null;
  after: string | null;
}

/** The fields whose value changed (or that only one side has), each in words. */
export function auditChanges(before: Record<string, AuditValue> | null, after: Record<string, AuditValue> | null): AuditChange[] {
  const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  return fields
    .filter((field) => JSON.stringify(before?.[field]) !== JSON.stringify(after?.[field]))
    .map((field) => ({
      field: fieldName(field),
      before: before === null || !(field in before) ? null : valueText(field, before[field]!),
      after: after === null || !(field in after) ? null : valueText(field, after[field]!),
    }));
}

function fieldName(field: string): string {
  return field.replace(/_micros$/, '').replace(/_ppm$/, '').replace(/_/g, ' ');
}

function valueText(field: string, value: AuditValue): string {
  if (value === null) return 'none';
  if (typeof value === 'number' && field.endsWith('_micros')) return `${formatCredits(value)} credits`;
  if (typeof value === 'number' && field.endsWith('_ppm')) return `× ${value / 1_000_000}`;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value)) return formatDateTime(value);
  return String(value);
}
