// The refusal log keeps a reason within refused_requests.reason's width: a 422 naming many
// fields is cut, not lost with its whole batch on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { RefusalLog } from '../../src/http/refusal-log.js';
import type { RefusedRequest } from '../../src/store/request-log-store.js';

describe('the refusal log', () => {
  it('cuts a reason to the 60 characters the store keeps', async () => {
    const written: RefusedRequest[] = [];
    const log = new RefusalLog({ recordRefusals: async (batch) => void written.push(...batch), pruneRefusals: async () => 0 }, 7);
    const fields = Array.from({ length: 12 }, (_, i) => `field_number_${i}`).join(',');
    log.add({ requestId: 'req_1', accountId: 'acct_1', keyId: 'key_1', memberId: null, model: null, path: '/v1/chat/completions', status: 422, reason: `validation_failed:${fields}` });
    log.add({ requestId: 'req_2', accountId: 'acct_1', keyId: 'key_1', memberId: null, model: null, path: '/v1/chat/completions', status: 422, reason: 'validation_failed:messages' });
    await log.flush();
    expect(written.map((r) => r.reason)).toEqual([`validation_failed:${fields}`.slice(0, 60), 'validation_failed:messages']);
  });
});
