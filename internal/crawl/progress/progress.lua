-- Crawl progress: dedupe + count + completion check in one atomic step.
--
-- KEYS[1]  the progress hash, task_progress:{original_task_id} (after the key prefix)
-- ARGV[1]  op: "init" (a TASK_INIT record), "tweet" (a tweet record),
--          "dead" (a dead-lettered record naming this task),
--          "signaled" (the completion signal was delivered) or "fail" (the
--          task failed at its completion deadline)
-- ARGV[2]  offset field of the record's topic-partition: "offset:<topic>:<partition>"
--          ("fail": the TTL in seconds of a finished hash)
-- ARGV[3]  the record's offset
-- ARGV[4]  total_tweets (init only)
-- ARGV[5]  TTL in seconds once COMPLETED
-- ARGV[6]  TTL in seconds while not completed (refreshed on every record)
-- ARGV[7]  the record's coordinates "<topic>:<partition>:<offset>"
-- ARGV[8]  tweet_data.id (tweet only)
--
-- Returns {result, processed_tweets, total_tweets or -1, status, completer,
-- duplicate_tweets, dead_lettered_records}. result is "initialized",
-- "counted", "duplicate", "dead_lettered", "signaled" or "failed"; completer
-- is 1 for the one record whose processing made the task COMPLETED, as long
-- as the completion signal for it has not been confirmed (so a redelivery of
-- that record after a crash between counting and signalling signals again).
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

if op == 'dead' then
  -- A record the consumer could not use but that names this task: counted
  -- once (the watermark dedupes redelivery), nothing else changes. The
  -- task's status and completion are the tweets' business only.
  local h = redis.call('HMGET', key, ARGV[2], 'total_tweets', 'processed_tweets', 'status',
    'duplicate_tweets', 'dead_lettered_records')
  local status = h[4] or ''
  local dead = tonumber(h[6]) or 0
  local result = 'duplicate'
  if tonumber(ARGV[3]) > tonumber(h[1] or '-1') then
    result = 'dead_lettered'
    dead = dead + 1
    redis.call('HSET', key, ARGV[2], ARGV[3], 'dead_lettered_records', dead)
    if status ~= 'COMPLETED' and status ~= 'FAILED' then
      redis.call('EXPIRE', key, tonumber(ARGV[6]))
    end
  end
  return {result, tonumber(h[3]) or 0, tonumber(h[2]) or -1, status, 0, tonumber(h[5]) or 0, dead}
end

-- One read and one write per record: the script is the hot path of every
-- tweet and Redis runs scripts one at a time.
local offset = tonumber(ARGV[3])
local idField = 'tweet:' .. (ARGV[8] or '')
local h = redis.call('HMGET', key, ARGV[2], 'total_tweets', 'processed_tweets', 'status',
  'completed_by', 'completion_signaled', 'duplicate_tweets', idField, 'dead_lettered_records')
local seen = tonumber(h[1] or '-1')
local total = tonumber(h[2])
local processed = tonumber(h[3]) or 0
local status = h[4] or ''
local dups = tonumber(h[7]) or 0
local dead = tonumber(h[9]) or 0
local finished = status == 'COMPLETED' or status == 'FAILED'
local completer = 0

if offset <= seen then
  -- A redelivered record: nothing changes. Only the completing record's
  -- redelivery, before its signal was confirmed, asks for the signal again.
  if status == 'COMPLETED' and h[5] == ARGV[7] and not h[6] then
    completer = 1
  end
  return {'duplicate', processed, total or -1, status, completer, dups, dead}
end

local result
local fields = {ARGV[2], offset}
if op == 'init' then
  if finished then
    -- The task is over; a late TASK_INIT changes nothing but the watermark.
    redis.call('HSET', key, unpack(fields))
    return {'duplicate', processed, total or -1, status, 0, dups, dead}
  end
  result = 'initialized'
  total = tonumber(ARGV[4])
  table.insert(fields, 'total_tweets')
  table.insert(fields, total)
  if status == '' then
    status = 'INITIALIZED'
  end
  if processed > total then
    dups = dups + processed - total
    processed = total
    table.insert(fields, 'duplicate_tweets')
    table.insert(fields, dups)
  end
elseif status == 'COMPLETED' or h[8] or (total ~= nil and processed >= total) then
  result = 'duplicate'
  dups = dups + 1
  table.insert(fields, 'duplicate_tweets')
  table.insert(fields, dups)
else
  result = 'counted'
  processed = processed + 1
  table.insert(fields, idField)
  table.insert(fields, 1)
  if not finished then
    status = 'PROCESSING'
  end
end

local ttl = tonumber(ARGV[6])
if finished then
  ttl = nil -- already expiring since it finished; a late record must not extend it
elseif total ~= nil and processed >= total then
  status = 'COMPLETED'
  completer = 1
  ttl = tonumber(ARGV[5])
  table.insert(fields, 'completed_by')
  table.insert(fields, ARGV[7])
end
table.insert(fields, 'processed_tweets')
table.insert(fields, processed)
table.insert(fields, 'status')
table.insert(fields, status)
redis.call('HSET', key, unpack(fields))
if ttl then
  redis.call('EXPIRE', key, ttl)
end
return {result, processed, total or -1, status, completer, dups, dead}
