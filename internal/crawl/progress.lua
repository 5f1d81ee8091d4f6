-- Crawl progress: dedupe + count + completion check in one atomic step.
--
-- KEYS[1]  the progress hash, task_progress:{original_task_id} (after the key prefix)
-- ARGV[1]  op: "init" (a TASK_INIT record), "tweet" (a counted tweet record) or
--          "signaled" (the completion signal was delivered)
-- ARGV[2]  offset field of the record's topic-partition: "offset:<topic>:<partition>"
-- ARGV[3]  the record's offset
-- ARGV[4]  total_tweets (init only)
-- ARGV[5]  TTL in seconds once COMPLETED
-- ARGV[6]  TTL in seconds while not completed (refreshed on every record)
-- ARGV[7]  the record's coordinates "<topic>:<partition>:<offset>"
--
-- Returns {result, processed_tweets, total_tweets or -1, status, completer}.
-- result is "initialized", "counted", "duplicate" or "signaled"; completer is 1
-- for the one record whose processing made the task COMPLETED, as long as the
-- completion signal for it has not been confirmed (so a redelivery of that
-- record after a crash between counting and signalling signals again).
--
-- Dedupe: a partition is consumed in offset order and its offsets are
-- committed only after counting, so every record of this task at or below the
-- highest counted offset of its topic-partition has been counted already. One
-- field per topic-partition is enough; the hash does not grow per tweet.

local key = KEYS[1]
local op = ARGV[1]

if op == 'signaled' then
  if redis.call('EXISTS', key) == 1 then
    redis.call('HSET', key, 'completion_signaled', '1')
  end
  return {'signaled', 0, -1, '', 0}
end

-- One read and one write per record: the script is the hot path of every
-- counted tweet and Redis runs scripts one at a time.
local offset = tonumber(ARGV[3])
local h = redis.call('HMGET', key, ARGV[2], 'total_tweets', 'processed_tweets', 'status',
  'completed_by', 'completion_signaled')
local seen = tonumber(h[1] or '-1')
local total = tonumber(h[2])
local processed = tonumber(h[3]) or 0
local status = h[4] or ''
local completer = 0

if offset <= seen then
  -- A redelivered record: nothing changes. Only the completing record's
  -- redelivery, before its signal was confirmed, asks for the signal again.
  if status == 'COMPLETED' and h[5] == ARGV[7] and not h[6] then
    completer = 1
  end
  return {'duplicate', processed, total or -1, status, completer}
end

local result
local fields = {ARGV[2], offset}
if op == 'init' then
  result = 'initialized'
  total = tonumber(ARGV[4])
  table.insert(fields, 'total_tweets')
  table.insert(fields, total)
  if status == '' then
    status = 'INITIALIZED'
  end
else
  result = 'counted'
  processed = processed + 1
  if status ~= 'COMPLETED' then
    status = 'PROCESSING'
  end
end

local ttl = tonumber(ARGV[6])
if status == 'COMPLETED' then
  ttl = nil -- already expiring since completion; a late record must not extend it
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
return {result, processed, total or -1, status, completer}
