// The dashboard's refusals that the API has no error for (closed sign-up, wrong current
// password, a redeemed code...): a status and a message meant for the person at the
// screen. Rendered by dashboard/error-reply.ts in lmgate's unified body.
import { LmgateError } from '../errors.js';

export class DashboardError extends LmgateError {
  constructor(status: 400 | 401 | 403 | 404 | 409 | 410, message: string) {
    super(status, message);
  }
}
