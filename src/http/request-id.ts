// Every response carries x-request-id, and error bodies repeat it as error.request_id.
// A caller's own id is kept when it is short and plain (so logs can be joined across
// services); anything else is replaced, since it would end up in our logs verbatim.
import { randomBase62 } from '../ids.js';
import type { IncomingMessage } from 'node:http';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const PROCESS_PREFIX = `req_${randomBase62(10)}`;
let counter = 0;

export function generateRequestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && INCOMING_ID.test(incoming)) return incoming;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return PROCESS_PREFIX + counter.toString(36);
}
