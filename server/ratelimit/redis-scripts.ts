// The Lua scripts of the shared limit (D-14). Each runs atomically on the store, so one call or a whole
// tRPC batch is judged and counted in one step however many instances ask at once. Plain scripts without
// a shebang line: Redis 7.0 and Upstash both run them, with the store's clock (TIME) allowed since
// Redis 5 (effects replication).
//
// KEYS[1] is one hash per identifier: field = index of a fixed window (floor(ms / window)), value = calls
// counted in it. Only the current and the previous window are kept. One key per identifier keeps every
// key a script touches declared in KEYS (as Redis Cluster requires), although the windows are
// only known from the store's clock inside the script.

/**
 * Admits ARGV[3] calls if they fit (ARGV[1] calls per ARGV[2] ms), by the rule of sliding-window.ts:
 *   used = floor(previous × (1 − elapsed / window)) + current,  admitted ⟺ used + calls ≤ limit.
 * A refused call writes nothing. Returns {admitted 0|1, current before, previous, elapsed ms, window index}.
 */
export const ADMIT_SCRIPT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local calls = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local index = math.floor(now / window)
local elapsed = now - index * window
local field = tostring(index)
local current = tonumber(redis.call('HGET', KEYS[1], field) or '0')
local previous = tonumber(redis.call('HGET', KEYS[1], tostring(index - 1)) or '0')
local used = math.floor(previous * (1 - elapsed / window)) + current
if calls < 1 or used + calls > limit then
  return {0, current, previous, elapsed, index}
end
redis.call('HINCRBY', KEYS[1], field, calls)
for _, old in ipairs(redis.call('HKEYS', KEYS[1])) do
  if old ~= field and old ~= tostring(index - 1) then redis.call('HDEL', KEYS[1], old) end
end
redis.call('PEXPIRE', KEYS[1], window * 2 + 1000)
return {1, current, previous, elapsed, index}
`;

/**
 * Gives back up to ARGV[2] calls of window ARGV[3] (or of the current window when ARGV[3] is empty;
 * ARGV[1] is the window in ms), never below zero and never creating a count. Returns the calls given back.
 */
export const REFUND_SCRIPT = `
local window = tonumber(ARGV[1])
local field = ARGV[3]
if field == '' then
  local time = redis.call('TIME')
  field = tostring(math.floor((tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)) / window))
end
local have = tonumber(redis.call('HGET', KEYS[1], field) or '0')
local give = math.min(have, tonumber(ARGV[2]))
if give <= 0 then return 0 end
redis.call('HINCRBY', KEYS[1], field, -give)
return give
`;
