package countscript

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/crawl"
)

const testTopic = crawl.DataTopicDefault

// tweetAt is a distinct tweet (its id follows from where it was first sent).
func tweetAt(task int64, partition int32, offset int64) crawl.Update {
	return copyAt(fmt.Sprintf("t%d-%d", partition, offset), task, partition, offset)
}

// copyAt is tweet id sent (again) at a record of its own.
func copyAt(id string, task int64, partition int32, offset int64) crawl.Update {
	return crawl.Update{TaskID: task, TweetID: id, Coord: crawl.Coordinates{Topic: testTopic, Partition: partition, Offset: offset}}
}

func initAt(task, total int64, offset int64) crawl.Update {
	return crawl.Update{TaskID: task, Init: true, TotalTweets: total,
		Coord: crawl.Coordinates{Topic: crawl.ControlTopicDefault, Partition: 0, Offset: offset}}
}

// applyAll applies updates one by one and returns the outcomes.
func applyAll(t *testing.T, s *Store, us []crawl.Update) []crawl.Outcome {
	t.Helper()
	out := make([]crawl.Outcome, len(us))
	for i, u := range us {
		o, err := s.Apply(context.Background(), u)
		if err != nil {
			t.Fatalf("apply %d (%+v): %v", i, u, err)
		}
		out[i] = o
	}
	return out
}

func completers(outs []crawl.Outcome) []int {
	var idx []int
	for i, o := range outs {
		if o.Completer {
			idx = append(idx, i)
		}
	}
	return idx
}

func TestProgressScriptOrderings(t *testing.T) {
	const task = 123
	tweets := func(n int) []crawl.Update {
		us := make([]crawl.Update, n)
		for i := range us {
			us[i] = tweetAt(task, int32(i%2), int64(i/2))
		}
		return us
	}
	cases := []struct {
		name          string
		updates       []crawl.Update
		wantCompleter int // index of the update that completes, -1 for none
		wantProcessed int64
		wantStatus    string
	}{
		{"init first", append([]crawl.Update{initAt(task, 3, 0)}, tweets(3)...), 3, 3, crawl.ProgressCompleted},
		{"init last", append(tweets(3), initAt(task, 3, 0)), 3, 3, crawl.ProgressCompleted},
		{"init between", append(append(tweets(3)[:1:1], initAt(task, 3, 0)), tweets(3)[1:]...), 3, 3, crawl.ProgressCompleted},
		{"zero tweets", []crawl.Update{initAt(task, 0, 0)}, 0, 0, crawl.ProgressCompleted},
		{"not yet complete", append([]crawl.Update{initAt(task, 5, 0)}, tweets(3)...), -1, 3, crawl.ProgressProcessing},
		{"data without init", tweets(4), -1, 4, crawl.ProgressProcessing},
		{"more than announced", append([]crawl.Update{initAt(task, 2, 0)}, tweets(3)...), 2, 2, crawl.ProgressCompleted},
		{"more than announced, init last", append(tweets(3), initAt(task, 2, 0)), 3, 2, crawl.ProgressCompleted},
	}
	for _, b := range redisBackends(t) {
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				s := New(b.rdb, b.prefix+tc.name+":", time.Hour, 24*time.Hour)
				outs := applyAll(t, s, tc.updates)
				got := completers(outs)
				if tc.wantCompleter < 0 && len(got) != 0 || tc.wantCompleter >= 0 && (len(got) != 1 || got[0] != tc.wantCompleter) {
					t.Fatalf("completers = %v, want [%d]", got, tc.wantCompleter)
				}
				p, err := s.Get(context.Background(), task)
				if err != nil {
					t.Fatal(err)
				}
				if p.ProcessedTweets != tc.wantProcessed || p.Status != tc.wantStatus {
					t.Fatalf("progress = %+v, want processed %d status %s", p, tc.wantProcessed, tc.wantStatus)
				}
			})
		}
	}
}

func TestProgressScriptStatusSequence(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			outs := applyAll(t, s, []crawl.Update{initAt(7, 2, 0), tweetAt(7, 0, 0), tweetAt(7, 0, 1)})
			want := []struct {
				result crawl.Result
				status string
			}{{crawl.ResultInitialized, crawl.ProgressInitialized}, {crawl.ResultCounted, crawl.ProgressProcessing}, {crawl.ResultCounted, crawl.ProgressCompleted}}
			for i, w := range want {
				if outs[i].Result != w.result || outs[i].Progress.Status != w.status {
					t.Errorf("update %d = %+v, want %s/%s", i, outs[i], w.result, w.status)
				}
			}
			if outs[2].Progress.TotalTweets != 2 || outs[2].Progress.ProcessedTweets != 2 {
				t.Errorf("final progress = %+v", outs[2].Progress)
			}
		})
	}
}

func TestProgressScriptRedeliveryCountsOnce(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			records := []crawl.Update{tweetAt(9, 0, 10), tweetAt(9, 1, 4), initAt(9, 3, 2), tweetAt(9, 0, 11)}
			first := applyAll(t, s, records)
			if got := completers(first); len(got) != 1 || got[0] != 3 {
				t.Fatalf("first pass completers = %v, want [3]", got)
			}
			// Crash before the signal was confirmed: only the completing
			// record's redelivery asks for the signal again.
			second := applyAll(t, s, records)
			for i, o := range second {
				if o.Result != crawl.ResultDuplicate {
					t.Errorf("redelivered %d result = %s, want duplicate", i, o.Result)
				}
			}
			if got := completers(second); len(got) != 1 || got[0] != 3 {
				t.Fatalf("redelivery before signal: completers = %v, want [3]", got)
			}
			if err := s.MarkSignaled(ctx, 9); err != nil {
				t.Fatal(err)
			}
			if got := completers(applyAll(t, s, records)); len(got) != 0 {
				t.Fatalf("redelivery after signal: completers = %v, want none", got)
			}
			p, err := s.Get(ctx, 9)
			if err != nil {
				t.Fatal(err)
			}
			if p.ProcessedTweets != 3 || p.TotalTweets != 3 || p.Status != crawl.ProgressCompleted {
				t.Fatalf("progress = %+v, want 3/3 COMPLETED", p)
			}
		})
	}
}

// The crawler sends a tweet again (a producer retry): the copy lands at a new
// offset, possibly on another partition, before or after TASK_INIT. Only
// distinct ids count; the copies are duplicates.
func TestProgressScriptCopiesCountOnce(t *testing.T) {
	cases := []struct {
		name    string
		updates []crawl.Update
	}{
		{"copy on the same partition", []crawl.Update{initAt(11, 2, 0), copyAt("a", 11, 2, 40), copyAt("a", 11, 2, 41), copyAt("b", 11, 2, 42)}},
		{"copy on another partition", []crawl.Update{initAt(11, 2, 0), copyAt("a", 11, 2, 40), copyAt("a", 11, 3, 7), copyAt("b", 11, 1, 42)}},
		{"copy before TASK_INIT", []crawl.Update{copyAt("a", 11, 2, 40), copyAt("a", 11, 3, 7), initAt(11, 2, 0), copyAt("b", 11, 1, 42)}},
		{"copy after completion", []crawl.Update{initAt(11, 2, 0), copyAt("a", 11, 2, 40), copyAt("b", 11, 1, 42), copyAt("a", 11, 3, 7)}},
	}
	for _, b := range redisBackends(t) {
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				s := New(b.rdb, b.prefix+tc.name+":", time.Hour, 24*time.Hour)
				outs := applyAll(t, s, tc.updates)
				if got := completers(outs); len(got) != 1 {
					t.Fatalf("completers = %v, want one", got)
				}
				dups := 0
				for _, o := range outs {
					if o.Result == crawl.ResultDuplicate {
						dups++
					}
				}
				p, err := s.Get(context.Background(), 11)
				if err != nil {
					t.Fatal(err)
				}
				if dups != 1 || p.ProcessedTweets != 2 || p.TotalTweets != 2 || p.DuplicateTweets != 1 || p.Status != crawl.ProgressCompleted {
					t.Fatalf("%d duplicate results, progress = %+v, want 2/2 COMPLETED with 1 duplicate", dups, p)
				}
				// Redelivering everything changes nothing, not even the copy count.
				applyAll(t, s, tc.updates)
				if again, _ := s.Get(context.Background(), 11); again != p {
					t.Fatalf("after redelivery %+v, want %+v", again, p)
				}
			})
		}
	}
}

// A crawler whose total_tweets counted its copies never reaches the total;
// the copies are visible so the deadline can say so.
func TestProgressScriptTotalCountingCopies(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			outs := applyAll(t, s, []crawl.Update{initAt(12, 4, 0), copyAt("a", 12, 0, 1), copyAt("a", 12, 1, 1),
				copyAt("b", 12, 0, 2), copyAt("b", 12, 1, 2)})
			if got := completers(outs); len(got) != 0 {
				t.Fatalf("completers = %v, want none", got)
			}
			p := outs[len(outs)-1].Progress
			if p.ProcessedTweets != 2 || p.DuplicateTweets != 2 || p.Missing() != 2 || p.Status != crawl.ProgressProcessing {
				t.Fatalf("progress = %+v", p)
			}
		})
	}
}

// At the deadline the hash becomes FAILED unless it completed; a late tweet
// is still counted (once) but never completes a failed task.
func TestProgressScriptFail(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			applyAll(t, s, []crawl.Update{initAt(14, 2, 0), tweetAt(14, 0, 0)})
			p, err := s.Fail(ctx, 14)
			if err != nil || p.Status != crawl.ProgressFailed || p.ProcessedTweets != 1 || p.TotalTweets != 2 {
				t.Fatalf("Fail = %+v, %v", p, err)
			}
			if ttl := b.rdb.TTL(ctx, s.Key(14)).Val(); ttl <= 0 || ttl > time.Hour {
				t.Fatalf("TTL after failure = %v, want at most the completed TTL", ttl)
			}
			late := applyAll(t, s, []crawl.Update{tweetAt(14, 0, 1), copyAt("t0-1", 14, 1, 0)})
			if late[0].Result != crawl.ResultCounted || late[1].Result != crawl.ResultDuplicate || len(completers(late)) != 0 {
				t.Fatalf("late outcomes = %+v", late)
			}
			if p, _ := s.Get(ctx, 14); p.Status != crawl.ProgressFailed || p.ProcessedTweets != 2 || p.DuplicateTweets != 1 {
				t.Fatalf("progress after late tweets = %+v", p)
			}
			// A completed task stays completed; Fail of a task nobody heard
			// of leaves a FAILED hash so that late tweets cannot complete it.
			applyAll(t, s, []crawl.Update{initAt(15, 1, 0), tweetAt(15, 0, 0)})
			if p, err := s.Fail(ctx, 15); err != nil || p.Status != crawl.ProgressCompleted {
				t.Fatalf("Fail of a completed task = %+v, %v", p, err)
			}
			if p, err := s.Fail(ctx, 16); err != nil || p.Status != crawl.ProgressFailed || p.TotalTweets != -1 {
				t.Fatalf("Fail of an unknown task = %+v, %v", p, err)
			}
		})
	}
}

func deadAt(task int64, topic string, partition int32, offset int64) crawl.Update {
	return crawl.Update{TaskID: task, DeadLetter: true, Coord: crawl.Coordinates{Topic: topic, Partition: partition, Offset: offset}}
}

// Dead letters naming a task count once per record, whatever the order and
// redelivery, and change nothing else: not the status, not completion.
func TestProgressScriptDeadLetters(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			outs := applyAll(t, s, []crawl.Update{
				deadAt(17, testTopic, 0, 0), deadAt(17, testTopic, 0, 0), // redelivered
				deadAt(17, crawl.ControlTopicDefault, 0, 0), // same offset, another partition
			})
			wantResults := []crawl.Result{crawl.ResultDeadLettered, crawl.ResultDuplicate, crawl.ResultDeadLettered}
			for i, o := range outs {
				if o.Result != wantResults[i] || o.Completer {
					t.Errorf("dead letter %d = %+v, want %s", i, o, wantResults[i])
				}
			}
			if p, _ := s.Get(ctx, 17); p.DeadLetteredRecords != 2 || p.Status != "" || p.TotalTweets != -1 {
				t.Fatalf("progress after dead letters = %+v", p)
			}
			if ttl := b.rdb.TTL(ctx, s.Key(17)).Val(); ttl <= time.Hour || ttl > 24*time.Hour {
				t.Fatalf("TTL of a hash of dead letters = %v, want the idle TTL", ttl)
			}
			// Later tweets of the partition are counted; the completion
			// carries the dead letters so far.
			done := applyAll(t, s, []crawl.Update{initAt(17, 1, 1), tweetAt(17, 0, 1)})
			if c := done[1]; !c.Completer || c.Progress.DeadLetteredRecords != 2 || c.Progress.ProcessedTweets != 1 {
				t.Fatalf("completion = %+v", c)
			}
			// After completion a dead letter still counts, without reviving the hash.
			if o := applyAll(t, s, []crawl.Update{deadAt(17, testTopic, 0, 2)})[0]; o.Result != crawl.ResultDeadLettered || o.Progress.Status != crawl.ProgressCompleted {
				t.Fatalf("late dead letter = %+v", o)
			}
			if ttl := b.rdb.TTL(ctx, s.Key(17)).Val(); ttl <= 0 || ttl > time.Hour {
				t.Fatalf("TTL after a late dead letter = %v, want at most the completed TTL", ttl)
			}
			if p, err := s.Fail(ctx, 17); err != nil || p.DeadLetteredRecords != 3 || p.Status != crawl.ProgressCompleted {
				t.Fatalf("Fail = %+v, %v", p, err)
			}
		})
	}
}

func TestProgressScriptTTL(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			applyAll(t, s, []crawl.Update{initAt(13, 2, 0), tweetAt(13, 0, 0)})
			if ttl := b.rdb.TTL(ctx, s.Key(13)).Val(); ttl <= time.Hour || ttl > 24*time.Hour {
				t.Fatalf("TTL while processing = %v, want the idle TTL", ttl)
			}
			applyAll(t, s, []crawl.Update{tweetAt(13, 0, 1)})
			if ttl := b.rdb.TTL(ctx, s.Key(13)).Val(); ttl <= 0 || ttl > time.Hour {
				t.Fatalf("TTL after completion = %v, want at most the completed TTL", ttl)
			}
			// A late record after completion must not extend the key's life.
			applyAll(t, s, []crawl.Update{tweetAt(13, 0, 2)})
			if ttl := b.rdb.TTL(ctx, s.Key(13)).Val(); ttl <= 0 || ttl > time.Hour {
				t.Fatalf("TTL after a late record = %v, want at most the completed TTL", ttl)
			}
			if b.mini != nil {
				b.mini.FastForward(2 * time.Hour)
				if n := b.rdb.Exists(ctx, s.Key(13)).Val(); n != 0 {
					t.Fatalf("progress hash still exists after its TTL")
				}
			}
		})
	}
}

func TestProgressScriptKeyKeepsContractName(t *testing.T) {
	s := New(nil, "tl:", 0, 0)
	if got := s.Key(123); got != "tl:task_progress:123" {
		t.Fatalf("Key = %q", got)
	}
}

// Many consumers racing over the same task: exactly one completes it.
func TestProgressScriptConcurrentSingleCompleter(t *testing.T) {
	const partitions, perPartition = 4, 50
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			var completed atomic.Int32
			var wg sync.WaitGroup
			for p := range int32(partitions) {
				// Two goroutines per partition replay the same records, as
				// an old and a new group member would around a rebalance.
				for range 2 {
					wg.Go(func() {
						for off := range int64(perPartition) {
							o, err := s.Apply(context.Background(), tweetAt(21, p, off))
							if err != nil {
								t.Error(err)
								return
							}
							if o.Completer && o.Result != crawl.ResultDuplicate {
								completed.Add(1)
							}
						}
					})
				}
			}
			wg.Go(func() {
				o, err := s.Apply(context.Background(), initAt(21, partitions*perPartition, 0))
				if err != nil {
					t.Error(err)
				} else if o.Completer {
					completed.Add(1)
				}
			})
			wg.Wait()
			p, err := s.Get(context.Background(), 21)
			if err != nil {
				t.Fatal(err)
			}
			if completed.Load() != 1 || p.ProcessedTweets != partitions*perPartition || p.Status != crawl.ProgressCompleted {
				t.Fatalf("completions = %d, progress = %+v", completed.Load(), p)
			}
		})
	}
}

// Every tweet sent twice, the copy on another partition, each partition
// applied by its own goroutine: exactly one completion, processed == total.
func TestProgressScriptConcurrentCopiesSingleCompleter(t *testing.T) {
	const partitions, perPartition = 4, 50
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			var completed atomic.Int32
			var wg sync.WaitGroup
			for p := range int32(partitions) {
				wg.Go(func() {
					for off := range int64(2 * perPartition) {
						// Offsets 2k and 2k+1 carry tweet k of this partition
						// and the copy of tweet k of the next one.
						src := p
						if off%2 == 1 {
							src = (p + 1) % partitions
						}
						o, err := s.Apply(context.Background(), copyAt(fmt.Sprintf("%d-%d", src, off/2), 22, p, off))
						if err != nil {
							t.Error(err)
							return
						}
						if o.Completer {
							completed.Add(1)
						}
					}
				})
			}
			wg.Go(func() {
				if o, err := s.Apply(context.Background(), initAt(22, partitions*perPartition, 0)); err != nil {
					t.Error(err)
				} else if o.Completer {
					completed.Add(1)
				}
			})
			wg.Wait()
			p, err := s.Get(context.Background(), 22)
			if err != nil {
				t.Fatal(err)
			}
			if completed.Load() != 1 || p.ProcessedTweets != partitions*perPartition ||
				p.DuplicateTweets != partitions*perPartition || p.Status != crawl.ProgressCompleted {
				t.Fatalf("completions = %d, progress = %+v", completed.Load(), p)
			}
		})
	}
}

func TestProgressBatchMatchesSingle(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			batch := []crawl.Update{tweetAt(31, 0, 0), tweetAt(31, 0, 1), tweetAt(31, 0, 1), initAt(31, 2, 5)}
			outs, err := s.ApplyBatch(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			want := []crawl.Result{crawl.ResultCounted, crawl.ResultCounted, crawl.ResultDuplicate, crawl.ResultInitialized}
			for i, w := range want {
				if outs[i].Result != w {
					t.Errorf("batch[%d] = %s, want %s", i, outs[i].Result, w)
				}
			}
			if got := completers(outs); len(got) != 1 || got[0] != 3 {
				t.Fatalf("completers = %v, want [3]", got)
			}
		})
	}
}

func TestProgressScriptReloadsAfterFlush(t *testing.T) {
	for _, b := range redisBackends(t) {
		if b.mini == nil {
			continue // flushing the shared real Redis's script cache would disturb others
		}
		ctx := context.Background()
		s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
		applyAll(t, s, []crawl.Update{tweetAt(41, 0, 0)})
		if err := b.rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if o := applyAll(t, s, []crawl.Update{tweetAt(41, 0, 1)}); o[0].Result != crawl.ResultCounted {
			t.Fatalf("after script flush: %+v", o[0])
		}
	}
}

// A batch larger than one script call keeps its order across the calls.
func TestProgressBatchSpansCalls(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := New(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			const n = 2*updatesPerCallMax + 50
			batch := []crawl.Update{initAt(51, n, 0)}
			for off := range int64(n) {
				batch = append(batch, tweetAt(51, 0, off))
			}
			outs, err := s.ApplyBatch(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != n+1 || outs[n].Progress.ProcessedTweets != n || !outs[n].Completer {
				t.Fatalf("%d outcomes, last %+v", len(outs), outs[len(outs)-1])
			}
			if got := completers(outs); len(got) != 1 {
				t.Fatalf("completers = %v", got)
			}
		})
	}
}

// One call per task carries many records: every outcome and the hash it
// leaves (counts, ids, watermarks, completion, TTL) are exactly those of one
// call per record, for batches mixing tasks, redeliveries, copies, dead
// letters, late and smaller totals, and tasks finished before the batch.
func TestProgressBatchEqualsOneCallPerRecord(t *testing.T) {
	mixed := func(task int64) []crawl.Update {
		return []crawl.Update{
			deadAt(task, testTopic, 0, 0), tweetAt(task, 0, 1), copyAt("t0-1", task, 0, 2), tweetAt(task, 0, 3),
			tweetAt(task, 0, 3), deadAt(task, testTopic, 0, 3), initAt(task, 3, 0), tweetAt(task, 1, 0),
			tweetAt(task, 0, 4), deadAt(task, testTopic, 0, 5), initAt(task, 3, 0), tweetAt(task, 0, 4),
		}
	}
	cases := []struct {
		name    string
		before  []crawl.Update // applied one by one first
		batch   []crawl.Update
		signals bool // MarkSignaled between before and batch
	}{
		{name: "mixed", batch: mixed(61)},
		{name: "two tasks interleaved", batch: interleave(mixed(61), mixed(62))},
		{name: "smaller total after more tweets", batch: []crawl.Update{tweetAt(61, 0, 0), tweetAt(61, 0, 1),
			tweetAt(61, 0, 2), initAt(61, 2, 0), tweetAt(61, 0, 3)}},
		{name: "redelivery of the completer", before: mixed(61), batch: mixed(61)},
		{name: "redelivery after the signal", before: mixed(61), batch: mixed(61), signals: true},
		{name: "late records after completion", before: mixed(61), batch: []crawl.Update{tweetAt(61, 0, 9),
			initAt(61, 5, 4), deadAt(61, testTopic, 0, 10)}},
		{name: "zero tweets", batch: []crawl.Update{initAt(61, 0, 0), tweetAt(61, 0, 0)}},
	}
	for _, b := range redisBackends(t) {
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				one := New(b.rdb, b.prefix+tc.name+":one:", time.Hour, 24*time.Hour)
				batched := New(b.rdb, b.prefix+tc.name+":batch:", time.Hour, 24*time.Hour)
				for _, s := range []*Store{one, batched} {
					applyAll(t, s, tc.before)
					if tc.signals {
						if err := s.MarkSignaled(ctx, 61); err != nil {
							t.Fatal(err)
						}
					}
				}
				want := applyAll(t, one, tc.batch)
				got, err := batched.ApplyBatch(ctx, tc.batch)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("record %d (%+v): batched %+v, one call each %+v", i, tc.batch[i], got[i], want[i])
					}
				}
				for _, task := range []int64{61, 62} {
					w, g := b.rdb.HGetAll(ctx, one.Key(task)).Val(), b.rdb.HGetAll(ctx, batched.Key(task)).Val()
					if fmt.Sprint(w) != fmt.Sprint(g) {
						t.Errorf("task %d hash: batched %v, one call each %v", task, g, w)
					}
					if w, g := ttlClass(b.rdb.TTL(ctx, one.Key(task)).Val()), ttlClass(b.rdb.TTL(ctx, batched.Key(task)).Val()); w != g {
						t.Errorf("task %d TTL: batched %s, one call each %s", task, g, w)
					}
				}
			})
		}
	}
}

func interleave(a, b []crawl.Update) []crawl.Update {
	var out []crawl.Update
	for i := range max(len(a), len(b)) {
		if i < len(a) {
			out = append(out, a[i])
		}
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

// ttlClass tells the TTLs the tests use apart: the completed TTL (an hour),
// the idle TTL (a day) or none.
func ttlClass(d time.Duration) string {
	switch {
	case d <= 0:
		return "none"
	case d <= time.Hour:
		return "completed"
	default:
		return "idle"
	}
}

// A reply that does not match its records is an error naming what is wrong,
// never a panic or outcomes made up for the records it does not cover.
func TestDecodeOutcomesRefusesMalformedReplies(t *testing.T) {
	group := []any{"counted", int64(1), int64(-1), "PROCESSING", int64(0), int64(0), int64(0)}
	cases := []struct {
		name  string
		reply any
	}{
		{"not an array", "counted"},
		{"empty", []any{}},
		{"codes not a string", append([]any{int64(1)}, group...)},
		{"fewer codes than records", append([]any{"g"}, group...)},
		{"first record without a group", append([]any{"cc"}, group...)},
		{"unknown code", append(append([]any{"gx"}, group...), group...)},
		{"group missing", append([]any{"gg"}, group...)},
		{"group cut short", []any{"gc", "counted", int64(1)}},
		{"values left over", append(append([]any{"gc"}, group...), group...)},
		{"count not a number", []any{"gc", "counted", "1", int64(-1), "PROCESSING", int64(0), int64(0), int64(0)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outs := make([]crawl.Outcome, 2)
			if err := decodeOutcomes(tc.reply, []int{0, 1}, outs); err == nil {
				t.Fatalf("reply %#v decoded as %+v", tc.reply, outs)
			}
		})
	}
	outs := make([]crawl.Outcome, 2)
	if err := decodeOutcomes(append([]any{"gc"}, group...), []int{0, 1}, outs); err != nil || outs[1].Progress.ProcessedTweets != 2 ||
		outs[1].Result != crawl.ResultCounted || outs[1].Progress.Status != crawl.ProgressProcessing {
		t.Fatalf("a well-formed reply: %+v, %v", outs, err)
	}
}
