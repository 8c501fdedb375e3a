// The scripts of shared mode that keep its state in step with the store and with the
// instances' leases, beside admission and settlement (scripts.ts, which describes the keys):
// a stored batch acknowledged, a balance mirrored, leases renewed, an abandoned admission
// given back.

/**
 * The store has a batch: each entry acknowledged (and deleted) once, its cost leaving
 * `pending` only then; each account's `stored` set from a balance read after the commit,
 * unless the mirror already holds a newer one.
 * KEYS: stream, then one credit hash per account
 * ARGV: group, account count n, n × (version, balance), then entries as (id, account index, cost)
 */
export const ACK = `
local stream, group, n = KEYS[1], ARGV[1], tonumber(ARGV[2])
for i = 1, n do
  local credit = KEYS[i + 1]
  local version, balance = tonumber(ARGV[1 + 2 * i]), ARGV[2 + 2 * i]
  if redis.call('EXISTS', credit) == 1 and version > tonumber(redis.call('HGET', credit, 'version') or '-1') then
    redis.call('HSET', credit, 'stored', balance, 'version', version)
  end
end
local acked = 0
for at = 3 + 2 * n, #ARGV, 3 do
  local id, index, cost = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  if redis.call('XACK', stream, group, id) == 1 then
    acked = acked + 1
    redis.call('XDEL', stream, id)
    local credit = KEYS[index + 1]
    if cost > 0 and redis.call('EXISTS', credit) == 1 then redis.call('HINCRBY', credit, 'pending', -cost) end
  end
end
return acked
`;

/**
 * A balance read from the store: creates the mirror, or moves it forward to a newer version.
 * KEYS: credit. ARGV: version, balance. Returns 1 when it changed the mirror.
 */
export const MIRROR = `
local credit, version = KEYS[1], tonumber(ARGV[1])
if redis.call('EXISTS', credit) == 0 then
  redis.call('HSET', credit, 'stored', ARGV[2], 'version', version, 'pending', 0, 'reserved', 0)
  return 1
end
if version > tonumber(redis.call('HGET', credit, 'version') or '-1') then
  redis.call('HSET', credit, 'stored', ARGV[2], 'version', version)
  return 1
end
return 0
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

/**
 * An admission given up on (its reply timed out, so the request was refused with 503), in
 * case Redis ran it after all: its slot and holds given back. Does nothing to one that
 * never ran, so it may be sent again.
 * KEYS: credit, leases, amounts, slots, and for a key with a credit limit its spend, leases, amounts.
 * ARGV: lease.
 */
export const RELEASE = `
local lease = ARGV[1]
local function give_back(hash, leases, amounts)
  local amount = redis.call('HGET', amounts, lease)
  if not amount then return end
  redis.call('HDEL', amounts, lease)
  redis.call('ZREM', leases, lease)
  if redis.call('EXISTS', hash) == 1 then redis.call('HINCRBY', hash, 'reserved', -tonumber(amount)) end
end
give_back(KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], lease)
if #KEYS > 4 then give_back(KEYS[5], KEYS[6], KEYS[7]) end
return 1
`;
