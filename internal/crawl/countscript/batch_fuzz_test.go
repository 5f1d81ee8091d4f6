package countscript

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/crawl"
)

// fuzzTasks are the tasks a fuzzed sequence spreads its records over.
var fuzzTasks = []int64{71, 72}

// fuzzRound numbers the fuzz target's iterations, so each writes keys of its own.
var fuzzRound atomic.Int64

// fuzzSequence turns bytes into records of two tasks on two partitions of
// each topic, three bytes a record, and the positions where a consumer's
// batches would end: offsets mostly grow per partition but go back now and
// then (redelivery), tweet ids come from a small set (copies), and totals
// are small, so completions, late records, smaller totals and dead letters
// all occur.
func fuzzSequence(data []byte) (us []crawl.Update, cuts []bool, signal []bool) {
	next := map[string]int64{}
	for i := 0; i+2 < len(data) && len(us) < 24; i += 3 {
		a, b, c := data[i], data[i+1], data[i+2]
		task := fuzzTasks[a&1]
		topic := crawl.DataTopicDefault
		kind := a >> 1 & 7 // 0–5 tweet, 6 init, 7 dead letter
		if kind == 6 || kind == 7 && b&1 == 1 {
			topic = crawl.ControlTopicDefault
		}
		partition := int32(b >> 1 & 1)
		k := topic + strconv.Itoa(int(partition))
		offset := next[k]
		if back := int64(b >> 2 & 3); b>>4&3 == 0 {
			offset = max(0, offset-1-back) // a redelivery of an earlier offset
		} else {
			next[k] = offset + 1
		}
		u := crawl.Update{TaskID: task, Coord: crawl.Coordinates{Topic: topic, Partition: partition, Offset: offset}}
		switch {
		case kind == 6:
			u.Init, u.TotalTweets = true, int64(c&7)
		case kind == 7:
			u.DeadLetter = true
		default:
			u.TweetID = "t" + strconv.Itoa(int(c&15))
		}
		us = append(us, u)
		cuts = append(cuts, c>>4&3 == 0)
		signal = append(signal, c>>6 == 3)
	}
	return us, cuts, signal
}

// Any sequence of records, applied in batches of any size with the
// completion signals confirmed between some of them, gives every record the
// outcome and leaves every hash (fields, values, TTL) exactly as one call
// per record does: the script's compact reply and its one read and one
// write per call change nothing a caller or the hash can see.
func FuzzProgressBatchEqualsOneCallPerRecord(f *testing.F) {
	f.Add([]byte("\x0c\x10\x02\x00\x10\x11\x00\x10\x12\x00\x00\x12\x0e\x10\xf1"))
	f.Add([]byte("\x00\x10\x01\x01\x10\x01\x00\x00\x01\x0c\x12\x02\x00\x12\x03\x0e\x12\xc4\x00\x12\x05"))
	f.Add([]byte("\x0c\x10\x00\x00\x10\x01\x0c\x11\x03\x00\x11\x02\x00\x30\x03\x00\x00\x04"))
	// TASK_INIT alone, then a batch whose dead letter leaves the task INITIALIZED and whose tweet
	// makes it PROCESSING: the tweet's outcome is not the one before it plus one.
	f.Add([]byte("\x0c\x10\x05\x0e\x10\x10\x00\x10\x11"))
	backends := redisBackends(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		us, cuts, signal := fuzzSequence(data)
		if len(us) == 0 {
			return
		}
		ctx := context.Background()
		for _, b := range backends {
			round := fmt.Sprintf("%sfuzz%d:", b.prefix, fuzzRound.Add(1))
			one := New(b.rdb, round+"one:", time.Hour, 24*time.Hour)
			batched := New(b.rdb, round+"batch:", time.Hour, 24*time.Hour)
			start := 0
			for i := range us {
				if i < len(us)-1 && !cuts[i] {
					continue
				}
				want := applyAll(t, one, us[start:i+1])
				got, err := batched.ApplyBatch(ctx, us[start:i+1])
				if err != nil {
					t.Fatalf("%s: batch %d–%d: %v", b.name, start, i, err)
				}
				for j := range want {
					if got[j] != want[j] {
						t.Fatalf("%s: record %d (%+v): batched %+v, one call each %+v", b.name, start+j, us[start+j], got[j], want[j])
					}
				}
				if signal[i] {
					for _, s := range []*Store{one, batched} {
						if err := s.MarkSignaled(ctx, us[i].TaskID); err != nil {
							t.Fatal(err)
						}
					}
				}
				start = i + 1
			}
			for _, task := range fuzzTasks {
				w, g := b.rdb.HGetAll(ctx, one.Key(task)).Val(), b.rdb.HGetAll(ctx, batched.Key(task)).Val()
				if fmt.Sprint(w) != fmt.Sprint(g) {
					t.Fatalf("%s: task %d hash: batched %v, one call each %v", b.name, task, g, w)
				}
				if w, g := ttlClass(b.rdb.TTL(ctx, one.Key(task)).Val()), ttlClass(b.rdb.TTL(ctx, batched.Key(task)).Val()); w != g {
					t.Fatalf("%s: task %d TTL: batched %s, one call each %s", b.name, task, g, w)
				}
				b.rdb.Del(ctx, one.Key(task), batched.Key(task))
			}
		}
	})
}
