// The console's side of the admin API (/api/admin/v1): paths, and the shapes it answers
// with: the server's own JSON types (src/admin/api-types.ts, which its response schemas are
// checked against). `export type` is erased, so no server code reaches the bundle.

export const ADMIN_API = '/api/admin/v1';

export function adminPath(path: string): string {
  return `${ADMIN_API}${path}`;
}

export type {
  AccountDetail,
  AccountPage,
  AdminAccount,
  AdminKey,
  AdminKeyControls,
  AdminRequestLog,
  AuditValue,
  AdminAuditEntry,
  AuditPage,
  Catalog,
  CodeList,
  CreatedCodes,
  KeyList,
  Ledger,
  OneAccount,
  Upstreams,
  UsageReport,
} from '../../../src/admin/api-types';
