// Package countscript keeps each crawl task's progress in Redis: the task_progress:{original_task_id}
// hash, changed only by one Lua script (progress.lua) that checks, counts and completes a task in
// one atomic step, so consumers on any number of workers count every tweet once. One step
// carries all of a task's records of a consumer's batch: one call per task per partition batch,
// not per tweet (docs/benchmarks.md).
package countscript

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/platform"
)

// Defaults for how long a progress hash outlives its task.
const (
	CompletedTTLDefault = 7 * 24 * time.Hour
	IdleTTLDefault      = 30 * 24 * time.Hour
)

//go:embed progress.lua
var progressLua string

var progressScript = redis.NewScript(progressLua)

// offsetField is the hash field holding the last offset counted from c's partition.
func offsetField(c crawl.Coordinates) string {
	return fmt.Sprintf("offset:%s:%d", c.Topic, c.Partition)
}

// Store keeps the task_progress:{original_task_id} hashes; it implements crawl.ProgressCounter.
type Store struct {
	rdb          redis.UniversalClient
	prefix       string
	completedTTL time.Duration
	idleTTL      time.Duration
}

// New builds a store; prefix isolates deployments and tests and is
// prepended to the contract's key name unchanged.
func New(rdb redis.UniversalClient, prefix string, completedTTL, idleTTL time.Duration) *Store {
	if completedTTL <= 0 {
		completedTTL = CompletedTTLDefault
	}
	if idleTTL <= 0 {
		idleTTL = IdleTTLDefault
	}
	return &Store{rdb: rdb, prefix: prefix, completedTTL: completedTTL, idleTTL: idleTTL}
}

// Key is the Redis key of a task's progress hash.
func (s *Store) Key(taskID int64) string {
	return s.prefix + "task_progress:" + strconv.FormatInt(taskID, 10)
}

// Apply runs the script for one record.
func (s *Store) Apply(ctx context.Context, u crawl.Update) (crawl.Outcome, error) {
	out, err := s.ApplyBatch(ctx, []crawl.Update{u})
	if err != nil {
		return crawl.Outcome{}, err
	}
	return out[0], nil
}

// updatesPerCallMax bounds the records one script call carries, so that one
// call stays short (Redis runs nothing else meanwhile) and its HMGET and HSET
// stay far below Lua's limit on unpacked arguments (two fields per record at
// most). A consumer's partition batch (BatchSizeDefault) fits in one call.
const updatesPerCallMax = 1000

// callsPerRoundTripMax bounds the script calls sent in one round trip, so
// that one reply never waits behind so many scripts that a busy Redis hits
// the client's read timeout.
const callsPerRoundTripMax = 100

// call is one script call: records of one task from one topic-partition, in
// their order in the batch.
type call struct {
	taskID int64
	index  []int // positions in the batch
}

// ApplyBatch applies records with one script call per task and
// topic-partition (records in batch order; more than updatesPerCallMax take
// more calls, run in order), the calls pipelined in one round trip of at
// most callsPerRoundTripMax. A consumer's batch is one partition's, so it
// takes one call per task. Each call is atomic and applies its records
// exactly as one call per record would, so the outcomes are the same. A
// failed batch may be retried whole: records already applied come back as
// duplicates and change nothing.
func (s *Store) ApplyBatch(ctx context.Context, us []crawl.Update) ([]crawl.Outcome, error) {
	calls := splitCalls(us)
	outs := make([]crawl.Outcome, len(us))
	for len(calls) > 0 {
		chunk := calls[:min(callsPerRoundTripMax, len(calls))]
		err := s.runCalls(ctx, us, chunk, outs)
		if err != nil && isNoScript(err) {
			// A restarted or flushed Redis lost the cached script; load it
			// and replay (safe: the script dedupes).
			if lerr := progressScript.Load(ctx, s.rdb).Err(); lerr != nil {
				return nil, fmt.Errorf("load crawl progress script: %w", lerr)
			}
			err = s.runCalls(ctx, us, chunk, outs)
		}
		if err != nil {
			return nil, err
		}
		calls = calls[len(chunk):]
	}
	return outs, nil
}

// splitCalls groups the batch per task, in order of first appearance: a
// task's records go to its last call while that call has room and they
// come from its topic-partition, else to a new call after it, so a task's
// calls keep the batch's order.
func splitCalls(us []crawl.Update) []call {
	var calls []call
	open := map[int64]int{} // task → its last call
	for i, u := range us {
		c, ok := open[u.TaskID]
		if !ok || len(calls[c].index) == updatesPerCallMax || !samePartition(u.Coord, us[calls[c].index[0]].Coord) {
			c = len(calls)
			calls = append(calls, call{taskID: u.TaskID, index: make([]int, 0, min(len(us)-i, updatesPerCallMax))})
			open[u.TaskID] = c
		}
		calls[c].index = append(calls[c].index, i)
	}
	return calls
}

func samePartition(a, b crawl.Coordinates) bool {
	return a.Partition == b.Partition && a.Topic == b.Topic
}

// argsPerUpdate is how many script arguments one record takes after the
// call's own four (see progress.lua, "apply").
const argsPerUpdate = 3

func (s *Store) runCalls(ctx context.Context, us []crawl.Update, calls []call, outs []crawl.Outcome) error {
	cmds := make([]*redis.Cmd, len(calls))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range calls {
			cmds[i] = progressScript.EvalSha(ctx, p, []string{s.Key(c.taskID)}, s.args(us, c)...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("run crawl progress script for %d records of %d tasks: %w", len(us), len(calls), err)
	}
	for i, c := range cmds {
		call := calls[i]
		if err := decodeOutcomes(c.Val(), call.index, outs); err != nil {
			return fmt.Errorf("crawl progress of task %d at %s: %w", call.taskID, us[call.index[0]].Coord, err)
		}
	}
	return nil
}

func (s *Store) args(us []crawl.Update, c call) []any {
	args := make([]any, 0, 4+argsPerUpdate*len(c.index))
	args = append(args, "apply", int64(s.completedTTL/time.Second), int64(s.idleTTL/time.Second),
		offsetField(us[c.index[0]].Coord))
	for _, at := range c.index {
		u := us[at]
		switch {
		case u.Init:
			args = append(args, "i", u.Coord.Offset, u.TotalTweets)
		case u.DeadLetter:
			args = append(args, "d", u.Coord.Offset, "")
		default:
			args = append(args, "t", u.Coord.Offset, u.TweetID)
		}
	}
	return args
}

// Fail marks the hash FAILED unless the task is COMPLETED already, in the
// same atomic script as counting, and returns the progress it ended with:
// the workflow decides Completed or Failed from that answer, so Redis and
// crawl_tasks never disagree. Repeating it changes nothing (a FAILED or
// COMPLETED hash stays as it is).
func (s *Store) Fail(ctx context.Context, taskID int64) (crawl.Progress, error) {
	v, err := progressScript.Run(ctx, s.rdb, []string{s.Key(taskID)}, "fail", int64(s.completedTTL/time.Second)).Result()
	if err != nil {
		return crawl.Progress{}, fmt.Errorf("mark crawl task %d failed in Redis: %w", taskID, err)
	}
	o, err := parseOutcome(v)
	if err != nil {
		return crawl.Progress{}, fmt.Errorf("mark crawl task %d failed in Redis: %w", taskID, err)
	}
	return o.Progress, nil
}

// MarkSignaled records that the workflow received the completion signal, so
// a redelivered completing record does not signal again.
func (s *Store) MarkSignaled(ctx context.Context, taskID int64) error {
	err := progressScript.Run(ctx, s.rdb, []string{s.Key(taskID)}, "signaled").Err()
	if err != nil {
		return fmt.Errorf("mark completion of crawl task %d signaled: %w", taskID, err)
	}
	return nil
}

// Get reads a task's progress in one command; Status is "" until a TASK_INIT
// or tweet of the task is counted.
func (s *Store) Get(ctx context.Context, taskID int64) (crawl.Progress, error) {
	vals, err := s.rdb.HMGet(ctx, s.Key(taskID), "total_tweets", "processed_tweets", "duplicate_tweets",
		"dead_lettered_records", "status").Result()
	if err != nil {
		return crawl.Progress{}, fmt.Errorf("read crawl progress of task %d: %w", taskID, err)
	}
	p := crawl.Progress{TotalTweets: -1}
	counts := []struct {
		name string
		dst  *int64
	}{{"total_tweets", &p.TotalTweets}, {"processed_tweets", &p.ProcessedTweets}, {"duplicate_tweets", &p.DuplicateTweets},
		{"dead_lettered_records", &p.DeadLetteredRecords}}
	for i, c := range counts {
		v, ok := vals[i].(string)
		if !ok {
			continue
		}
		if *c.dst, err = strconv.ParseInt(v, 10, 64); err != nil {
			return crawl.Progress{}, fmt.Errorf("crawl task %d %s %q: %w", taskID, c.name, v, err)
		}
	}
	p.Status, _ = vals[len(counts)].(string)
	return p, nil
}

// outcomeLen is how many values of the script's reply describe one record.
const outcomeLen = 7

// decodeOutcomes reads an "apply" reply into outs at the records' positions:
// a code per record, "c" for a tweet counted that changed nothing else (the
// previous record's outcome with one more processed tweet), "g" for a
// record whose outcome group follows (see progress.lua).
func decodeOutcomes(v any, index []int, outs []crawl.Outcome) error {
	vals, ok := v.([]any)
	if !ok || len(vals) == 0 {
		return fmt.Errorf("unexpected script reply %#v", v)
	}
	codes, ok := vals[0].(string)
	if !ok || len(codes) != len(index) {
		return fmt.Errorf("script reply codes %#v for %d records", vals[0], len(index))
	}
	groups := vals[1:]
	var prev crawl.Outcome
	for i, at := range index {
		switch codes[i] {
		case 'c':
			if i == 0 {
				return errors.New("script reply: the first record has no outcome group")
			}
			prev.Result, prev.Completer = crawl.ResultCounted, false
			prev.Progress.ProcessedTweets++
		case 'g':
			if len(groups) < outcomeLen {
				return fmt.Errorf("script reply: %d outcome groups for codes %q", (len(vals)-1)/outcomeLen, codes)
			}
			o, err := parseOutcome(groups[:outcomeLen])
			if err != nil {
				return err
			}
			prev, groups = o, groups[outcomeLen:]
		default:
			return fmt.Errorf("script reply: code %q", codes[i])
		}
		outs[at] = prev
	}
	if len(groups) != 0 {
		return fmt.Errorf("script reply: %d values left after codes %q", len(groups), codes)
	}
	return nil
}

func parseOutcome(v any) (crawl.Outcome, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) != outcomeLen {
		return crawl.Outcome{}, fmt.Errorf("unexpected script reply %#v", v)
	}
	result, _ := arr[0].(string)
	processed, ok1 := arr[1].(int64)
	total, ok2 := arr[2].(int64)
	status, _ := arr[3].(string)
	completer, ok3 := arr[4].(int64)
	dups, ok4 := arr[5].(int64)
	dead, ok5 := arr[6].(int64)
	if result == "" || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return crawl.Outcome{}, fmt.Errorf("unexpected script reply %#v", v)
	}
	return crawl.Outcome{
		Result: crawl.Result(result),
		Progress: crawl.Progress{TotalTweets: total, ProcessedTweets: processed, DuplicateTweets: dups,
			DeadLetteredRecords: dead, Status: status},
		Completer: completer == 1,
	}, nil
}

func isNoScript(err error) bool {
	return redis.HasErrorPrefix(err, "NOSCRIPT")
}

// FromPlatform is the store over the process's Redis, with REDIS_KEY_PREFIX
// and the CRAWL_PROGRESS_* lifetimes.
func FromPlatform(p *platform.Platform) *Store {
	return New(p.Redis, p.Config.Redis.KeyPrefix, p.Config.Crawl.ProgressTTL, p.Config.Crawl.ProgressIdleTTL)
}
