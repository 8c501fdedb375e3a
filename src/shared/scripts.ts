// The Lua scripts of shared mode. Each runs atomically in Redis, so every instance sees one
// order of admissions and settlements per account. Times come from Redis (TIME), not from
// the instances' clocks, so instances whose clocks differ still share one window.
//
// Per account (A), with `p` the key prefix:
//   p:A:credit   hash  stored (the store's balance, micro-credits), version (its
//                      balance_version), pending (charges settled but not yet in `stored`),
//                      reserved (sum of live reservations), later_version and
//                      later_balance (a read kept until no batch is open)
//   p:A:writes   zset  usage batches being written to the store → expiry (ms)
//   p:A:landed   hash  version of the store's balance → charges stored at it, still pending
//   p:A:leases   zset  reservation id → expiry (ms); p:A:amounts hash id → micro-credits
//   p:A:slots    zset  concurrency slot (same id) → expiry (ms)
//   p:A:rpm      string theoretical arrival time (GCRA, ms) of requests per minute
//   p:A:tpm      string the same for tokens per minute
// and p:usage, the stream of settled usage records waiting for the store.
//
//   available = stored − pending − reserved
// A charge is in `pending` from its settlement until `stored` is a balance read at or after
// the version its batch committed at (upkeep-scripts.ts: ACK, MIRROR): it is counted in
// exactly one of them at every moment, so any read of the hash is consistent.
//
// Per key with a credit limit (K), only for requests made with such a key (a `budget` row
// in its admission and settlement, counter-scripts.ts; other requests never touch it):
//   p:key:K:spend   hash  window (`total` or the UTC month `YYYY-MM`), spent (its charges
//                         in the window), reserved (the worst cases of its running requests)
//   p:key:K:leases  zset  reservation id → expiry (ms); p:key:K:amounts hash id → micro-credits
//   key available = limit − spent − reserved
// `spent` is read once (KEY_MIRROR, when a script answers 'load' for it: the store's sum with
// the key's records still in the usage stream), and from then on every settlement of the
// key's requests adds its charge: it is the count.

/** Shared by the scripts: the time, expired leases released, GCRA. */
export const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local WINDOW = 60000

-- Reservations whose lease ran out, given back to the hash that counts them as reserved.
local function release_leases(hash, leases, amounts)
  local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
  if #expired > 0 then
    local released = 0
    for _, id in ipairs(expired) do
      released = released + tonumber(redis.call('HGET', amounts, id) or '0')
      redis.call('HDEL', amounts, id)
    end
    redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
    if redis.call('EXISTS', hash) == 1 then redis.call('HINCRBY', hash, 'reserved', -released) end
  end
end

local function release_expired(credit, leases, amounts, slots)
  release_leases(credit, leases, amounts)
  redis.call('ZREMRANGEBYSCORE', slots, '-inf', now)
end

-- GCRA (limits/limiter.ts): returns allowed, the new arrival time, the current one.
local function gcra(key, limit, cost)
  local interval = WINDOW / limit
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  local new_tat = tat + cost * interval
  return new_tat - now <= WINDOW, new_tat, tat, interval
end

local function remaining(tat, interval)
  return math.max(0, math.floor((WINDOW - (tat - now)) / interval))
end

local function reset_sec(tat)
  return math.ceil(math.max(tat, now) / 1000)
end

local function retry_after(new_tat)
  return math.max(1, math.ceil((new_tat - WINDOW - now) / 1000))
end

local function set_tat(key, tat)
  -- Expires once fully replenished: an idle account leaves nothing behind.
  redis.call('SET', key, string.format('%.3f', tat), 'PX', math.max(1, math.ceil(tat - now)))
end
`;

/** A key's spend, shared by the scripts that count it (key-credit.ts has the rule). */
export const KEY_SPEND = `
-- Kept while in use; a key idle this long (35 days) is read from the store again.
local KEY_SPEND_TTL_MS = 3024000000

-- What the key spent in the window, or nil when it must be read from the store first (no
-- count yet, or a count of another period: the limit changed).
local function key_spent(spend, window)
  local state = redis.call('HMGET', spend, 'window', 'spent')
  local current = state[1]
  if not current then return nil end
  if current == window then return tonumber(state[2]) end
  if current == 'total' or window == 'total' then return nil end
  if window > current then
    -- A new month: nothing is spent in it yet but what settles from now on.
    redis.call('HSET', spend, 'window', window, 'spent', 0)
    return 0
  end
  -- An instance whose clock is behind counts in the month already begun.
  return tonumber(state[2])
end
`;

/**
 * One request of requests per minute, for routes other than chat completions (and for a
 * chat request refused before its admission).
 * KEYS: rpm. ARGV: rpm. Returns {allowed 1/0, limit, remaining, reset, retry after}.
 */
export const TAKE_REQUEST = `${PRELUDE}
local limit = tonumber(ARGV[1])
local ok, new_tat, tat, interval = gcra(KEYS[1], limit, 1)
if not ok then return {0, limit, remaining(tat, interval), reset_sec(tat), retry_after(new_tat)} end
set_tat(KEYS[1], new_tat)
return {1, limit, remaining(new_tat, interval), reset_sec(new_tat), 0}
`;

/**
 * Requests per minute given back, one per key: taken by a request that was then refused.
 * KEYS: rpm keys. ARGV: their limits.
 */
export const GIVE_BACK_REQUEST = `${PRELUDE}
for i, key in ipairs(KEYS) do
  local tat = tonumber(redis.call('GET', key) or '0')
  local back = tat - WINDOW / tonumber(ARGV[i])
  if back <= now then redis.call('DEL', key) else set_tat(key, back) end
end
return 1
`;

/**
 * The state of an account's limits, taking nothing.
 * KEYS: rpm, tpm, slots. ARGV: rpm, tpm.
 * Returns {rpm remaining, rpm reset, tpm remaining, tpm reset, slots in use}.
 */
export const LIMITS = `${PRELUDE}
local rpm_ok, rpm_new, rpm_tat, rpm_interval = gcra(KEYS[1], tonumber(ARGV[1]), 0)
local tpm_ok, tpm_new, tpm_tat, tpm_interval = gcra(KEYS[2], tonumber(ARGV[2]), 0)
return {remaining(rpm_tat, rpm_interval), reset_sec(rpm_tat), remaining(tpm_tat, tpm_interval), reset_sec(tpm_tat), redis.call('ZCOUNT', KEYS[3], now, '+inf')}
`;

/**
 * An account's balance as the dashboard shows it: expired leases released first, so the
 * reservations of an instance that died stop counting once their lease ran out.
 * KEYS: credit, leases, amounts, slots. Returns {stored, pending, reserved}, or nil when
 * there is no mirror yet.
 */
export const SNAPSHOT = `${PRELUDE}
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
release_expired(KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return redis.call('HMGET', KEYS[1], 'stored', 'pending', 'reserved')
`;

/**
 * A key's spend read from the store: the count starts from it, unless one of this window
 * (or a later month) exists already, kept by settlements since.
 * KEYS: key spend. ARGV: window, spent. Returns 1 when it set the count.
 */
export const KEY_MIRROR = `${KEY_SPEND}
local current = redis.call('HGET', KEYS[1], 'window')
if current == ARGV[1] then return 0 end
if current and current ~= 'total' and ARGV[1] ~= 'total' and current > ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'window', ARGV[1], 'spent', ARGV[2])
redis.call('PEXPIRE', KEYS[1], KEY_SPEND_TTL_MS)
return 1
`;

/** What a key spent in a window, or -1 when there is no count of it yet. KEYS: key spend. ARGV: window. */
export const KEY_SPENT = `${KEY_SPEND}
return key_spent(KEYS[1], ARGV[1]) or -1
`;
