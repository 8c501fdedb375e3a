// The scripts of shared mode that keep its state in step with the store and with the
// instances' leases, beside admission and settlement (scripts.ts describes the keys,
// counter-scripts.ts admits, settles and gives back an abandoned admission): a batch opened
// and, once stored, acknowledged; a balance mirrored; leases renewed.

/**
 * The stored balance moved to a read of the store at `version`, and the charges that read
 * includes taken out of `pending`. A read replaces `stored` only when no batch is between
 * its start and its acknowledgement (`writes`): such a batch may be committed, in the read,
 * and its charges still pending, so the read would count them twice. A read that comes
 * while one is open is kept (`later_version`, `later_balance`) and applied at the first
 * moment none is: every batch committed before it was read has landed by then. Charges
 * acknowledged wait in `landed` under the version their batch committed at, until
 * `stored` is that new.
 */
const STORED = `
local function set_stored(credit, writes, landed, version, balance, now)
  redis.call('ZREMRANGEBYSCORE', writes, '-inf', now)
  local held = redis.call('HMGET', credit, 'version', 'later_version', 'later_balance')
  local later = tonumber(held[2] or '-1')
  if later > version then version, balance = later, held[3] end
  if redis.call('ZCARD', writes) > 0 then
    if version > later then redis.call('HSET', credit, 'later_version', version, 'later_balance', balance) end
  else
    if version > tonumber(held[1] or '-1') then redis.call('HSET', credit, 'stored', balance, 'version', version) end
    if later >= 0 then redis.call('HDEL', credit, 'later_version', 'later_balance') end
  end
  local at = tonumber(redis.call('HGET', credit, 'version') or '-1')
  local fields = redis.call('HGETALL', landed)
  local released = 0
  for i = 1, #fields, 2 do
    if tonumber(fields[i]) <= at then
      released = released + tonumber(fields[i + 1])
      redis.call('HDEL', landed, fields[i])
    end
  end
  if released > 0 then redis.call('HINCRBY', credit, 'pending', -released) end
end
`;

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * A batch about to be written to the store: until it is acknowledged (or `ttl` ms pass, a
 * writer that died), no read of its accounts' balances replaces `stored`.
 * KEYS: each account's writes. ARGV: batch token, ttl ms.
 */
export const OPEN_BATCH = `${NOW}
for _, writes in ipairs(KEYS) do
  redis.call('ZADD', writes, now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', writes, tonumber(ARGV[2]))
end
return 1
`;

/**
 * The store has a batch: each entry acknowledged (and deleted) once, what it put in
 * `pending` landed under the version its account's balance has after the batch's commit;
 * the batch closed; each account's `stored` set from that balance when no other batch is
 * open, and the landed charges it includes released.
 * KEYS: stream, then per account: credit, writes, landed
 * ARGV: group, batch token, account count n, n × (version, balance), then entries as
 *       (id, account index, pending)
 */
export const ACK = `${NOW}${STORED}
local stream, group, token, n = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
local acked = 0
for at = 4 + 2 * n, #ARGV, 3 do
  local id, index, amount = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  if redis.call('XACK', stream, group, id) == 1 then
    acked = acked + 1
    redis.call('XDEL', stream, id)
    local credit = KEYS[3 * index - 1]
    if amount > 0 and redis.call('EXISTS', credit) == 1 then
      redis.call('HINCRBY', KEYS[3 * index + 1], ARGV[2 + 2 * index], amount)
    end
  end
end
for i = 1, n do
  local credit, writes, landed = KEYS[3 * i - 1], KEYS[3 * i], KEYS[3 * i + 1]
  redis.call('ZREM', writes, token)
  if redis.call('EXISTS', credit) == 1 then set_stored(credit, writes, landed, tonumber(ARGV[2 + 2 * i]), ARGV[3 + 2 * i], now) end
end
return acked
`;

/**
 * A balance read from the store: creates the mirror, or moves it forward to a newer version.
 * KEYS: credit, writes, landed. ARGV: version, balance.
 */
export const MIRROR = `${NOW}${STORED}
local credit, version = KEYS[1], tonumber(ARGV[1])
if redis.call('EXISTS', credit) == 0 then
  redis.call('HSET', credit, 'stored', ARGV[2], 'version', version, 'pending', 0, 'reserved', 0)
  redis.call('DEL', KEYS[3])
  return 1
end
set_stored(credit, KEYS[2], KEYS[3], version, ARGV[2], now)
return 1
`;

/**
 * Live reservations and slots of a running instance get a new expiry; ones that already
 * expired (and were released) stay gone.
 * KEYS: the sorted sets that hold them (an account's leases and slots, or a key's leases).
 * ARGV: expiry offset ms, lease ids...
 */
export const RENEW = `
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do
  for _, leases in ipairs(KEYS) do redis.call('ZADD', leases, 'XX', expiry, ARGV[i]) end
end
return 1
`;
