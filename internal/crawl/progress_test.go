package crawl

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testTopic = DataTopicDefault

func tweetAt(task int64, partition int32, offset int64) Update {
	return Update{TaskID: task, Coord: Coordinates{Topic: testTopic, Partition: partition, Offset: offset}}
}

func initAt(task, total int64, offset int64) Update {
	return Update{TaskID: task, Init: true, TotalTweets: total,
		Coord: Coordinates{Topic: ControlTopicDefault, Partition: 0, Offset: offset}}
}

// applyAll applies updates one by one and returns the outcomes.
func applyAll(t *testing.T, s *ProgressStore, us []Update) []Outcome {
	t.Helper()
	out := make([]Outcome, len(us))
	for i, u := range us {
		o, err := s.Apply(context.Background(), u)
		if err != nil {
			t.Fatalf("apply %d (%+v): %v", i, u, err)
		}
		out[i] = o
	}
	return out
}

func completers(outs []Outcome) []int {
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
	tweets := func(n int) []Update {
		us := make([]Update, n)
		for i := range us {
			us[i] = tweetAt(task, int32(i%2), int64(i/2))
		}
		return us
	}
	cases := []struct {
		name          string
		updates       []Update
		wantCompleter int // index of the update that completes, -1 for none
		wantProcessed int64
		wantStatus    string
	}{
		{"init first", append([]Update{initAt(task, 3, 0)}, tweets(3)...), 3, 3, StatusCompleted},
		{"init last", append(tweets(3), initAt(task, 3, 0)), 3, 3, StatusCompleted},
		{"init between", append(append(tweets(3)[:1:1], initAt(task, 3, 0)), tweets(3)[1:]...), 3, 3, StatusCompleted},
		{"zero tweets", []Update{initAt(task, 0, 0)}, 0, 0, StatusCompleted},
		{"not yet complete", append([]Update{initAt(task, 5, 0)}, tweets(3)...), -1, 3, StatusProcessing},
		{"data without init", tweets(4), -1, 4, StatusProcessing},
		{"more than announced", append([]Update{initAt(task, 2, 0)}, tweets(3)...), 2, 3, StatusCompleted},
	}
	for _, b := range redisBackends(t) {
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				s := NewProgressStore(b.rdb, b.prefix+tc.name+":", time.Hour, 24*time.Hour)
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
			s := NewProgressStore(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			outs := applyAll(t, s, []Update{initAt(7, 2, 0), tweetAt(7, 0, 0), tweetAt(7, 0, 1)})
			want := []struct {
				result Result
				status string
			}{{ResultInitialized, StatusInitialized}, {ResultCounted, StatusProcessing}, {ResultCounted, StatusCompleted}}
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
			s := NewProgressStore(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			records := []Update{tweetAt(9, 0, 10), tweetAt(9, 1, 4), initAt(9, 3, 2), tweetAt(9, 0, 11)}
			first := applyAll(t, s, records)
			if got := completers(first); len(got) != 1 || got[0] != 3 {
				t.Fatalf("first pass completers = %v, want [3]", got)
			}
			// Crash before the signal was confirmed: only the completing
			// record's redelivery asks for the signal again.
			second := applyAll(t, s, records)
			for i, o := range second {
				if o.Result != ResultDuplicate {
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
			if p.ProcessedTweets != 3 || p.TotalTweets != 3 || p.Status != StatusCompleted {
				t.Fatalf("progress = %+v, want 3/3 COMPLETED", p)
			}
		})
	}
}

func TestProgressScriptLegitDuplicateCountsTwice(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := NewProgressStore(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			// The same tweet sent twice by the crawler arrives at two offsets.
			outs := applyAll(t, s, []Update{initAt(11, 2, 0), tweetAt(11, 2, 40), tweetAt(11, 2, 41)})
			if outs[1].Result != ResultCounted || outs[2].Result != ResultCounted || !outs[2].Completer {
				t.Fatalf("outcomes = %+v, want both counted and the second completing", outs)
			}
		})
	}
}

func TestProgressScriptTTL(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := NewProgressStore(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			applyAll(t, s, []Update{initAt(13, 2, 0), tweetAt(13, 0, 0)})
			if ttl := b.rdb.TTL(ctx, s.Key(13)).Val(); ttl <= time.Hour || ttl > 24*time.Hour {
				t.Fatalf("TTL while processing = %v, want the idle TTL", ttl)
			}
			applyAll(t, s, []Update{tweetAt(13, 0, 1)})
			if ttl := b.rdb.TTL(ctx, s.Key(13)).Val(); ttl <= 0 || ttl > time.Hour {
				t.Fatalf("TTL after completion = %v, want at most the completed TTL", ttl)
			}
			// A late record after completion must not extend the key's life.
			applyAll(t, s, []Update{tweetAt(13, 0, 2)})
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

func TestProgressScriptKeyKeepsSeedName(t *testing.T) {
	s := NewProgressStore(nil, "tl:", 0, 0)
	if got := s.Key(123); got != "tl:task_progress:123" {
		t.Fatalf("Key = %q", got)
	}
}

// Many consumers racing over the same task: exactly one completes it.
func TestProgressScriptConcurrentSingleCompleter(t *testing.T) {
	const partitions, perPartition = 4, 50
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := NewProgressStore(b.rdb, b.prefix, time.Hour, 24*time.Hour)
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
							if o.Completer && o.Result != ResultDuplicate {
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
			if completed.Load() != 1 || p.ProcessedTweets != partitions*perPartition || p.Status != StatusCompleted {
				t.Fatalf("completions = %d, progress = %+v", completed.Load(), p)
			}
		})
	}
}

func TestProgressBatchMatchesSingle(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := NewProgressStore(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			batch := []Update{tweetAt(31, 0, 0), tweetAt(31, 0, 1), tweetAt(31, 0, 1), initAt(31, 2, 5)}
			outs, err := s.ApplyBatch(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			want := []Result{ResultCounted, ResultCounted, ResultDuplicate, ResultInitialized}
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
		s := NewProgressStore(b.rdb, b.prefix, time.Hour, 24*time.Hour)
		applyAll(t, s, []Update{tweetAt(41, 0, 0)})
		if err := b.rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if o := applyAll(t, s, []Update{tweetAt(41, 0, 1)}); o[0].Result != ResultCounted {
			t.Fatalf("after script flush: %+v", o[0])
		}
	}
}

// A batch larger than one pipeline round trip keeps its order across them.
func TestProgressBatchSpansPipelines(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := NewProgressStore(b.rdb, b.prefix, time.Hour, 24*time.Hour)
			const n = 2*pipelineMax + 50
			batch := []Update{initAt(51, n, 0)}
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
