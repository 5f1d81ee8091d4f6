-- Crawl progress: dedupe + count + completion check in one atomic step.
--
-- KEYS[1]  the progress hash, task_progress:{original_task_id} (after the key prefix)
-- ARGV[1]  op: "apply" (records of this task, in order), "signaled" (the
--          completion signal was delivered) or "fail" (the task failed at
--          its completion deadline)
--
-- "apply": ARGV[2] the TTL in seconds once COMPLETED, ARGV[3] the TTL in
-- seconds while not completed (refreshed by every record that changes the
-- hash), ARGV[4] the offset field of the records' topic-partition,
-- "offset:<topic>:<partition>" (one call carries records of one partition),
-- then three arguments per record from ARGV[5]:
--   kind    "i" (a TASK_INIT record), "t" (a tweet record) or "d" (a
--           dead-lettered record naming this task)
--   offset  the record's offset
--   value   total_tweets (init), tweet_data.id (tweet), "" (dead)
-- The records are applied one after the other exactly as if each had a call
-- of its own, but the hash is read once (one HMGET of every field they
-- touch) and written once (one HSET, at most one EXPIRE): one call per task
-- per partition batch instead of one per record, still atomic.
-- "fail": ARGV[2] the TTL in seconds of a finished hash.
--
-- Each record's outcome is {result, processed_tweets, total_tweets or -1,
-- status, completer, duplicate_tweets, dead_lettered_records}. "signaled"
-- and "fail" return one such group. "apply" returns {codes, groups...}:
-- codes has one character per record, "c" for a tweet counted that changed
-- nothing but processed_tweets (its outcome is the previous record's with
-- one more processed tweet: the common record costs one byte of the reply),
-- "g" for every other record, whose group follows in order. The first
-- record is always "g". result is "initialized", "counted", "duplicate",
-- "dead_lettered", "signaled" or "failed"; completer is 1 for the one record
-- whose processing made the task COMPLETED, as long as the completion signal
-- for it has not been confirmed (so a redelivery of that record after a
-- crash between counting and signalling signals again).
--
-- The unit of work is a distinct tweet (the crawler announces total_tweets
-- as its number of distinct tweets). Every counted tweet id is a field "tweet:<id>" of
-- the hash, so a copy of a counted tweet (same id, any offset, any
-- partition, before or after TASK_INIT) is a duplicate: duplicate_tweets
-- grows, processed_tweets does not. The ids live and expire with the hash,
-- and once TASK_INIT is known at most total_tweets of them are kept.
-- processed_tweets never exceeds total_tweets: a tweet after COMPLETED is a
-- duplicate, and a smaller total announced after more distinct tweets
-- arrived turns the excess into duplicates.
--
-- Redelivery: a partition is consumed in offset order and its offsets are
-- committed only after counting, so every record of this task at or below
-- the highest applied offset of its topic-partition was applied already. It
-- changes nothing at all (duplicate_tweets counts crawler copies, not
-- redeliveries). A dead-lettered record moves the same watermark, so its
-- redelivery does not add to dead_lettered_records either.

local key = KEYS[1]
local op = ARGV[1]

if op == 'signaled' then
  if redis.call('EXISTS', key) == 1 then
    redis.call('HSET', key, 'completion_signaled', '1')
  end
  return {'signaled', 0, -1, '', 0, 0, 0}
end

if op == 'fail' then
  -- The workflow gave up: FAILED unless the task completed first. Atomic
  -- with counting, so a task is never both failed and completed here.
  local h = redis.call('HMGET', key, 'total_tweets', 'processed_tweets', 'status', 'duplicate_tweets',
    'dead_lettered_records')
  local status = h[3] or ''
  if status ~= 'COMPLETED' and status ~= 'FAILED' then
    status = 'FAILED'
    redis.call('HSET', key, 'status', status)
    redis.call('EXPIRE', key, tonumber(ARGV[2]))
  end
  return {'failed', tonumber(h[2]) or 0, tonumber(h[1]) or -1, status, 0, tonumber(h[4]) or 0,
    tonumber(h[5]) or 0}
end


-- "apply": the hot path of every record. Redis runs scripts one at a time,
-- so the whole call reads once, works in Lua locals and tables and writes
-- once: each field gets the value the last record left in it, as if every
-- record had written it.
local completedTTL = tonumber(ARGV[2])
local idleTTL = tonumber(ARGV[3])
local offsetField = ARGV[4]
local first = 5

-- The fields every record may read, the partition's watermark, then each
-- tweet id field, each named once; idField: each tweet record's field, by
-- its first argument's position.
local names = {'total_tweets', 'processed_tweets', 'status', 'completed_by', 'completion_signaled',
  'duplicate_tweets', 'dead_lettered_records', offsetField}
local fixed = #names
local idAt, idField = {}, {}
for a = first, #ARGV, 3 do
  if ARGV[a] == 't' then
    local f = 'tweet:' .. ARGV[a + 2]
    idField[a] = f
    if not idAt[f] then
      names[#names + 1] = f
      idAt[f] = #names
    end
  end
end
local h = redis.call('HMGET', key, unpack(names))

local total = tonumber(h[1])
local processed = tonumber(h[2]) or 0
local status = h[3] or ''
local completedBy = h[4]
local signaled = h[5]
local dups = tonumber(h[6]) or 0
local dead = tonumber(h[7]) or 0
-- mark: the partition's watermark; markArg: the offset it moved to, as the
-- record gave it (written as sent, not as a Lua number).
local mark = tonumber(h[fixed]) or -1
local markArg = nil
-- counted: the tweet id fields present, read or set by this call; added:
-- those this call sets, in order.
local counted, added = {}, {}
for f, i in pairs(idAt) do
  counted[f] = h[i] ~= false
end
local changed = {}
-- ttl: the last EXPIRE a record asked for (all would run at the same
-- instant, so the last one is the one that holds).
local ttl = nil

local function finishedNow()
  return status == 'COMPLETED' or status == 'FAILED'
end

-- "<topic>:<partition>:<offset>", the record's coordinates, from the field's
-- "offset:" on.
local function coordinates(offsetArg)
  return string.sub(offsetField, 8) .. ':' .. offsetArg
end

-- A record the consumer could not use but that names this task: counted
-- once (the watermark dedupes redelivery), nothing else changes. The
-- task's status and completion are the tweets' business only.
local function applyDead(offset, offsetArg)
  if offset <= mark then
    return 'duplicate', 0
  end
  dead = dead + 1
  mark, markArg = offset, offsetArg
  changed.dead = true
  if not finishedNow() then
    ttl = idleTTL
  end
  return 'dead_lettered', 0
end

-- A TASK_INIT or a tweet; returns the result and the completer flag.
local function applyCounted(kind, offset, offsetArg, value, idField)
  local finished = finishedNow()
  if offset <= mark then
    -- A redelivered record: nothing changes. Only the completing record's
    -- redelivery, before its signal was confirmed, asks for the signal again.
    if status == 'COMPLETED' and not signaled and completedBy == coordinates(offsetArg) then
      return 'duplicate', 1
    end
    return 'duplicate', 0
  end
  mark, markArg = offset, offsetArg
  local result
  if kind == 'i' then
    if finished then
      -- The task is over; a late TASK_INIT changes nothing but the watermark.
      return 'duplicate', 0
    end
    result = 'initialized'
    total = tonumber(value)
    changed.total = true
    if status == '' then
      status = 'INITIALIZED'
    end
    if processed > total then
      dups = dups + processed - total
      processed = total
      changed.dups = true
    end
  elseif status == 'COMPLETED' or counted[idField] or (total ~= nil and processed >= total) then
    result = 'duplicate'
    dups = dups + 1
    changed.dups = true
  else
    result = 'counted'
    processed = processed + 1
    counted[idField] = true
    added[#added + 1] = idField
    if not finished then
      status = 'PROCESSING'
    end
  end
  local completer = 0
  if not finished then
    -- A finished hash is already expiring; a late record must not extend it.
    ttl = idleTTL
    if total ~= nil and processed >= total then
      status = 'COMPLETED'
      completer = 1
      ttl = completedTTL
      completedBy = coordinates(offsetArg)
      changed.completedBy = true
    end
  end
  changed.progress = true
  return result, completer
end

local codes, out = {}, {''}
-- A counted tweet changes processed_tweets and perhaps the status: when the
-- status stayed and it did not complete the task, its outcome is the
-- previous record's with one more processed tweet, and its code says so.
local prevStatus = nil
for a = first, #ARGV, 3 do
  local kind, offsetArg = ARGV[a], ARGV[a + 1]
  local offset = tonumber(offsetArg)
  local result, completer
  if kind == 'd' then
    result, completer = applyDead(offset, offsetArg)
  else
    result, completer = applyCounted(kind, offset, offsetArg, ARGV[a + 2], idField[a])
  end
  if result == 'counted' and completer == 0 and status == prevStatus then
    codes[#codes + 1] = 'c'
  else
    codes[#codes + 1] = 'g'
    local n = #out
    out[n + 1], out[n + 2], out[n + 3], out[n + 4] = result, processed, total or -1, status
    out[n + 5], out[n + 6], out[n + 7] = completer, dups, dead
  end
  prevStatus = status
end
out[1] = table.concat(codes)

local args = {}
if markArg then
  args[1], args[2] = offsetField, markArg
end
for _, f in ipairs(added) do
  args[#args + 1] = f
  args[#args + 1] = 1
end
local function write(flag, f, v)
  if flag then
    args[#args + 1] = f
    args[#args + 1] = v
  end
end
write(changed.total, 'total_tweets', total)
write(changed.dups, 'duplicate_tweets', dups)
write(changed.dead, 'dead_lettered_records', dead)
write(changed.completedBy, 'completed_by', completedBy)
write(changed.progress, 'processed_tweets', processed)
write(changed.progress, 'status', status)
if #args > 0 then
  redis.call('HSET', key, unpack(args))
end
if ttl then
  redis.call('EXPIRE', key, ttl)
end
return out
