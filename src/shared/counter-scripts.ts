// Admission and settlement in shared mode: one Lua script each, over the request's counters
// as rows (billing/counters.ts has the same evaluation in TypeScript; counter-rows.ts builds
// the rows). A row is a kind, its Redis keys and two arguments:
//   slots    concurrency          keys: slots zset             a: limit
//   rate     GCRA per minute      keys: arrival time           a: limit, b: cost
//   balance  an account's credit  keys: credit, leases, amounts
//   budget   a limit on spending  keys: spend, leases, amounts a: limit, b: window
// A new limit (an organisation's budget, say) is one more row, not another script.

import { KEY_SPEND, PRELUDE } from './scripts.js';

/** What the row kinds share: the rows read from the arguments, the 402 rule, holds. */
const ROWS = `
-- The rows from ARGV[first] on, four arguments each (kind, key count, a, b), and their keys
-- in turn from KEYS[1].
local function rows_of(KEYS, ARGV, first)
  local rows, k = {}, 0
  for i = first, #ARGV, 4 do
    local n = tonumber(ARGV[i + 1])
    local keys = {}
    for j = 1, n do keys[j] = KEYS[k + j] end
    k = k + n
    rows[#rows + 1] = { kind = ARGV[i], keys = keys, a = ARGV[i + 2], b = ARGV[i + 3] }
  end
  return rows
end

-- The 402 rule of every credit row (billing/credit-rule.ts assertFits). Spec 8: at zero credits
-- every request is refused, even one that would cost nothing.
local function fits(available, amount)
  return available > 0 and available >= amount
end

local function hold(hash, leases, amounts, lease, expiry, amount)
  if amount <= 0 then return end
  redis.call('ZADD', leases, expiry, lease)
  redis.call('HSET', amounts, lease, amount)
  redis.call('HINCRBY', hash, 'reserved', amount)
end

local function release_hold(hash, leases, amounts, lease)
  local amount = redis.call('HGET', amounts, lease)
  if not amount then return end
  redis.call('HDEL', amounts, lease)
  redis.call('ZREM', leases, lease)
  if redis.call('EXISTS', hash) == 1 then redis.call('HINCRBY', hash, 'reserved', -tonumber(amount)) end
end
`;

/**
 * A script that runs one item's body for each of several items in order, in one call, so
 * the admissions (or settlements) an instance has at one moment cost one round trip and one
 * script run between them, and each is still decided atomically after the one before it.
 * The body reads its item's KEYS and ARGV as a lone script would; `kinds` is defined once
 * per call, before the items (what each kind of row does).
 * KEYS: each item's keys in turn. ARGV: per item, its key count, its arg count, its args.
 * Returns the items' replies, in order.
 */
function batched(kinds: string, body: string): string {
  return `${PRELUDE}${KEY_SPEND}${ROWS}${kinds}
local function one(KEYS, ARGV)
${body}
end
local replies, k, a = {}, 0, 1
while a <= #ARGV do
  local key_count, arg_count = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local keys, args = {}, {}
  for j = 1, key_count do keys[j] = KEYS[k + j] end
  for j = 1, arg_count do args[j] = ARGV[a + 1 + j] end
  k, a = k + key_count, a + 2 + arg_count
  replies[#replies + 1] = one(keys, args)
end
return replies
`;
}

/**
 * Admission, the one round trip before the model: every row checked in order, the first
 * that refuses decides and nothing is taken; then every row taken.
 * ARGV: lease id, lease ms, worst case, then the rows. KEYS: the rows' keys.
 * Replies {'ok', two values per row} (rate: remaining, reset; balance: the balance, stored −
 * pending), or {'refused', row index (from 0), the row's values} (rate: limit, remaining,
 * reset, retry after; balance and budget: available, what is left before holds), or
 * {'load', row index}: the row's state must be read from the store first.
 */
export const ADMIT = batched(
  `
-- Per kind: check(row, item) returns a refusal or nothing, taking nothing; take(row, item)
-- takes the row's share and returns its two reply values.
local check = {
  slots = function(row)
    redis.call('ZREMRANGEBYSCORE', row.keys[1], '-inf', now)
    if redis.call('ZCARD', row.keys[1]) >= tonumber(row.a) then return {'refused'} end
  end,
  rate = function(row)
    local limit = tonumber(row.a)
    local ok, new_tat, tat, interval = gcra(row.keys[1], limit, tonumber(row.b))
    row.new_tat, row.interval = new_tat, interval
    if not ok then return {'refused', limit, remaining(tat, interval), reset_sec(tat), retry_after(new_tat)} end
  end,
  balance = function(row, item)
    local credit = row.keys[1]
    if redis.call('EXISTS', credit) == 0 then return {'load'} end
    release_leases(credit, row.keys[2], row.keys[3])
    local state = redis.call('HMGET', credit, 'stored', 'pending', 'reserved')
    row.balance = tonumber(state[1]) - tonumber(state[2] or '0')
    local available = row.balance - tonumber(state[3] or '0')
    if not fits(available, item.worst) then return {'refused', math.max(0, available), row.balance} end
  end,
  budget = function(row, item)
    local spend = row.keys[1]
    local spent = key_spent(spend, row.b)
    if not spent then return {'load'} end
    release_leases(spend, row.keys[2], row.keys[3])
    local unspent = tonumber(row.a) - spent
    local available = unspent - tonumber(redis.call('HGET', spend, 'reserved') or '0')
    if not fits(available, item.worst) then return {'refused', math.max(0, available), unspent} end
  end,
}

local take = {
  slots = function(row, item) redis.call('ZADD', row.keys[1], item.expiry, item.lease) end,
  rate = function(row)
    if tonumber(row.b) > 0 then set_tat(row.keys[1], row.new_tat) end
    return remaining(row.new_tat, row.interval), reset_sec(row.new_tat)
  end,
  balance = function(row, item)
    hold(row.keys[1], row.keys[2], row.keys[3], item.lease, item.expiry, item.worst)
    return row.balance
  end,
  budget = function(row, item)
    hold(row.keys[1], row.keys[2], row.keys[3], item.lease, item.expiry, item.worst)
    redis.call('PEXPIRE', row.keys[1], KEY_SPEND_TTL_MS)
  end,
}
`,
  `
local item = { lease = ARGV[1], expiry = now + tonumber(ARGV[2]), worst = tonumber(ARGV[3]) }
local rows = rows_of(KEYS, ARGV, 4)
for i, row in ipairs(rows) do
  local refusal = check[row.kind](row, item)
  if refusal then
    table.insert(refusal, 2, i - 1)
    return refusal
  end
end
local reply = {'ok'}
for _, row in ipairs(rows) do
  local a, b = take[row.kind](row, item)
  reply[#reply + 1] = a or 0
  reply[#reply + 1] = b or 0
end
return reply
`,
);

const SETTLED_MARKER_MS = 6 * 60 * 60 * 1000;

/**
 * Settlement, every row in order: the slot and holds released, completion tokens added to
 * tokens per minute (a rate row's cost), the cost charged by the balance row (from the hold
 * and beyond it from what is available, never below 0, into pending) and that charge counted
 * by the budget rows after it; then the usage record appended to the stream with what was
 * charged. For an account without a mirror the store charges it, cut at the stored
 * balance. Once per lease: the settlement's marker (kept SETTLED_MARKER_MS, far beyond any
 * retry of it) makes a retry whose first try ran change nothing.
 * ARGV: lease id, cost, account id, record (JSON), then the rows. KEYS: the rows' keys, the
 * stream, the marker. Replies what was charged.
 */
export const SETTLE = batched(
  `
-- Per kind: settle(row, item) releases the row's share and counts the usage; the balance
-- row sets item.charged (and item.counted, what it put in pending), the rows after it count that.
local settle = {
  slots = function(row, item) redis.call('ZREM', row.keys[1], item.lease) end,
  rate = function(row)
    local tokens = tonumber(row.b)
    if tokens > 0 then
      local _, new_tat = gcra(row.keys[1], tonumber(row.a), tokens)
      set_tat(row.keys[1], new_tat)
    end
  end,
  balance = function(row, item)
    local credit = row.keys[1]
    release_hold(credit, row.keys[2], row.keys[3], item.lease)
    if item.cost <= 0 or redis.call('EXISTS', credit) == 0 then return end
    local state = redis.call('HMGET', credit, 'stored', 'pending', 'reserved')
    local available = tonumber(state[1]) - tonumber(state[2] or '0') - tonumber(state[3] or '0')
    item.charged = math.min(item.cost, math.max(0, available))
    if item.charged > 0 then
      redis.call('HINCRBY', credit, 'pending', item.charged)
      item.counted = item.charged
    end
  end,
  budget = function(row, item)
    local spend = row.keys[1]
    release_hold(spend, row.keys[2], row.keys[3], item.lease)
    if item.charged > 0 and key_spent(spend, row.b) then redis.call('HINCRBY', spend, 'spent', item.charged) end
  end,
}
`,
  `
local marker = KEYS[#KEYS]
local done = redis.call('GET', marker)
if done then return tonumber(done) end
local cost = tonumber(ARGV[2])
local item = { lease = ARGV[1], cost = cost, charged = cost, counted = 0 }
for _, row in ipairs(rows_of(KEYS, ARGV, 5)) do settle[row.kind](row, item) end
redis.call('XADD', KEYS[#KEYS - 1], '*', 'account', ARGV[3], 'cost', item.charged, 'pending', item.counted, 'record', ARGV[4])
redis.call('SET', marker, item.charged, 'PX', ${SETTLED_MARKER_MS})
return item.charged
`,
);

/**
 * An admission given up on (its reply timed out, so the request was refused with 503), in
 * case Redis ran it after all: its slot and holds given back. Does nothing to one that
 * never ran, so it may be sent again.
 * KEYS: the slots, then per hold (a balance or budget row) its three keys. ARGV: lease.
 */
export const RELEASE = `${ROWS}
local lease = ARGV[1]
redis.call('ZREM', KEYS[1], lease)
for i = 2, #KEYS, 3 do release_hold(KEYS[i], KEYS[i + 1], KEYS[i + 2], lease) end
return 1
`;
