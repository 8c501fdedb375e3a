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
// Per key with a credit limit (K), only for requests made with such a key (the *_KEY
// variants of admission and settlement; other requests run the scripts without them):
//   p:key:K:spend   hash  window (`total` or the UTC month `YYYY-MM`), spent (its charges
//                         in the window), reserved (the worst cases of its running requests)
//   p:key:K:leases  zset  reservation id → expiry (ms); p:key:K:amounts hash id → micro-credits
//   key available = limit − spent − reserved
// `spent` is read once (KEY_MIRROR, when a script answers 'keyload': the store's sum with
// the key's records still in the usage stream), and from then on every settlement of the
// key's requests adds its charge: it is the count.

/** Shared by the scripts: the time, expired leases released, GCRA. */
const PRELUDE = `
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
const KEY_SPEND = `
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
 * A script that runs one item's body for each of several items in order, in one call, so
 * the admissions (or settlements) an instance has at one moment cost one round trip and one
 * script run between them, and each is still decided atomically after the one before it.
 * The body reads its item's KEYS and ARGV as a lone script would.
 * KEYS: each item's keys in turn. ARGV: keys per item, args per item, each item's args in turn.
 * Returns the items' replies, in order.
 */
function batched(body: string, functions = ''): string {
  return `${PRELUDE}${functions}
local function one(KEYS, ARGV)
${body}
end
local key_count, arg_count = tonumber(ARGV[1]), tonumber(ARGV[2])
local replies = {}
for i = 1, (#ARGV - 2) / arg_count do
  local keys, args = {}, {}
  for j = 1, key_count do keys[j] = KEYS[(i - 1) * key_count + j] end
  for j = 1, arg_count do args[j] = ARGV[2 + (i - 1) * arg_count + j] end
  replies[i] = one(keys, args)
end
return replies
`;
}

/**
 * Admission, the one round trip before the model: concurrency slot, requests per minute
 * (unless taken already), the prompt against tokens per minute, and the worst case reserved
 * (with `forKey`, against the key's credit limit as well). Everything or nothing is taken.
 * Batched: per item,
 * KEYS: credit, leases, amounts, slots, rpm, tpm [, key spend, key leases, key amounts]
 * ARGV: lease id, lease ms, rpm, tpm, prompt tokens, concurrency, worst case, take rpm (1/0)
 *       [, key limit, key window]
 * Replies {'ok', rpm remaining, rpm reset, balance (stored − pending)} or a refusal:
 * {'load'} (no mirror yet), {'concurrency'}, {'rpm'|'tpm', limit, remaining, reset, retry after},
 * {'credits', available, balance}; with `forKey` also {'keyload'} (no count of the key's spend yet)
 * and {'keycredits', available of the key's limit, what is left of it before holds}.
 */
function admit(forKey: boolean): string {
  return `
local credit, leases, amounts, slots, rpm_key, tpm_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local lease, lease_ms = ARGV[1], tonumber(ARGV[2])
local rpm, tpm, prompt = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local concurrency, worst, take_rpm = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8] == '1'
if redis.call('EXISTS', credit) == 0 then return {'load'} end
release_expired(credit, leases, amounts, slots)
if redis.call('ZCARD', slots) >= concurrency then return {'concurrency'} end
local rpm_ok, rpm_new, rpm_tat, rpm_interval = gcra(rpm_key, rpm, take_rpm and 1 or 0)
if not rpm_ok then
  return {'rpm', rpm, remaining(rpm_tat, rpm_interval), reset_sec(rpm_tat), retry_after(rpm_new)}
end
local tpm_ok, tpm_new, tpm_tat, tpm_interval = gcra(tpm_key, tpm, prompt)
if not tpm_ok then
  return {'tpm', tpm, remaining(tpm_tat, tpm_interval), reset_sec(tpm_tat), retry_after(tpm_new)}
end
local state = redis.call('HMGET', credit, 'stored', 'pending', 'reserved')
local balance = tonumber(state[1]) - tonumber(state[2] or '0')
local available = balance - tonumber(state[3] or '0')
-- Spec 8: at zero credits every request fails with 402, even one that would cost nothing.
if available <= 0 or available < worst then return {'credits', math.max(0, available), balance} end
${
  forKey
    ? `local key_spend, key_leases, key_amounts = KEYS[7], KEYS[8], KEYS[9]
local spent = key_spent(key_spend, ARGV[10])
if not spent then return {'keyload'} end
release_leases(key_spend, key_leases, key_amounts)
local key_unspent = tonumber(ARGV[9]) - spent
local key_available = key_unspent - tonumber(redis.call('HGET', key_spend, 'reserved') or '0')
if key_available <= 0 or key_available < worst then return {'keycredits', math.max(0, key_available), key_unspent} end`
    : ''
}
if take_rpm then set_tat(rpm_key, rpm_new) end
if prompt > 0 then set_tat(tpm_key, tpm_new) end
local expiry = now + lease_ms
redis.call('ZADD', slots, expiry, lease)
if worst > 0 then
  redis.call('ZADD', leases, expiry, lease)
  redis.call('HSET', amounts, lease, worst)
  redis.call('HINCRBY', credit, 'reserved', worst)
${
  forKey
    ? `  redis.call('ZADD', key_leases, expiry, lease)
  redis.call('HSET', key_amounts, lease, worst)
  redis.call('HINCRBY', key_spend, 'reserved', worst)`
    : ''
}
end
${forKey ? `redis.call('PEXPIRE', key_spend, KEY_SPEND_TTL_MS)` : ''}
return {'ok', remaining(rpm_new, rpm_interval), reset_sec(rpm_new), balance}
`;
}

export const ADMIT = batched(admit(false));
export const ADMIT_KEY = batched(admit(true), KEY_SPEND);

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

const SETTLED_MARKER_MS = 6 * 60 * 60 * 1000;

/**
 * Settlement: the reservation and slot released, completion tokens added to tokens per
 * minute, the cost charged (from the hold and beyond it from what is available) into
 * pending, and the usage record appended to the stream for the store with what was charged
 * (with `forKey`, the key's hold released and the charge added to its spend in the record's
 * window). Once per lease: the settlement's marker (kept SETTLED_MARKER_MS, far beyond
 * any retry of it) makes a retry whose first try ran change nothing. Replies, per item,
 * what was charged.
 * Batched: per item,
 * KEYS: credit, leases, amounts, slots, tpm, stream [, key spend, key leases, key amounts], marker
 * ARGV: lease id, cost, completion tokens, tpm, account id, record (JSON) [, key window]
 */
function settle(forKey: boolean): string {
  return `
local SETTLED_MARKER_MS = ${SETTLED_MARKER_MS}
local credit, leases, amounts, slots, tpm_key, stream = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local lease, cost, completion, tpm = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
-- Once per lease: a retry of a settlement that ran (its reply lost) changes nothing.
local marker = KEYS[#KEYS]
local done = redis.call('GET', marker)
if done then return tonumber(done) end
local amount = redis.call('HGET', amounts, lease)
local has_credit = redis.call('EXISTS', credit) == 1
if amount then
  redis.call('HDEL', amounts, lease)
  redis.call('ZREM', leases, lease)
  if has_credit then redis.call('HINCRBY', credit, 'reserved', -tonumber(amount)) end
end
redis.call('ZREM', slots, lease)
if completion > 0 then
  local _, new_tat = gcra(tpm_key, tpm, completion)
  set_tat(tpm_key, new_tat)
end
-- The cost is charged from the released hold and whatever else is available, never below
-- 0; the stream entry's cost is what was charged (the record keeps the full cost). Without
-- a mirror the store charges it, cut at the stored balance.
local charged, counted = cost, 0
if cost > 0 and has_credit then
  local state = redis.call('HMGET', credit, 'stored', 'pending', 'reserved')
  local available = tonumber(state[1]) - tonumber(state[2] or '0') - tonumber(state[3] or '0')
  charged = math.min(cost, math.max(0, available))
  if charged > 0 then
    redis.call('HINCRBY', credit, 'pending', charged)
    counted = charged
  end
end
${
  forKey
    ? `local key_spend, key_leases, key_amounts = KEYS[7], KEYS[8], KEYS[9]
local key_amount = redis.call('HGET', key_amounts, lease)
if key_amount then
  redis.call('HDEL', key_amounts, lease)
  redis.call('ZREM', key_leases, lease)
  if redis.call('EXISTS', key_spend) == 1 then redis.call('HINCRBY', key_spend, 'reserved', -tonumber(key_amount)) end
end
if charged > 0 and key_spent(key_spend, ARGV[7]) then redis.call('HINCRBY', key_spend, 'spent', charged) end`
    : ''
}
redis.call('XADD', stream, '*', 'account', ARGV[5], 'cost', charged, 'pending', counted, 'record', ARGV[6])
redis.call('SET', marker, charged, 'PX', SETTLED_MARKER_MS)
return charged
`;
}

export const SETTLE = batched(settle(false));
export const SETTLE_KEY = batched(settle(true), KEY_SPEND);

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
