package countscript

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/taskloom/taskloom/internal/crawl"
)

// BenchmarkApplyBatch500 counts a consumer's batch, 500 distinct tweets of
// one task and partition, in one script call per iteration, against the real
// Redis (skipped without one). redis_us/tweet is the script's own time as
// Redis reports it (INFO commandstats), which a wall clock on shared cores
// cannot separate from the client's.
//
//	go test -run XXX -bench ApplyBatch500 -benchtime 40x -benchmem ./internal/crawl/countscript/
func BenchmarkApplyBatch500(b *testing.B) {
	rdb, ok := realRedis(b)
	if !ok {
		b.Skip("needs a real Redis: miniredis does not report script time")
	}
	ctx := context.Background()
	s := New(rdb, uniquePrefix(), 0, 0)
	const task, perCall = 77, 500
	b.Cleanup(func() { rdb.Del(ctx, s.Key(task)) })
	batches := make([][]crawl.Update, b.N)
	for i := range batches {
		batches[i] = make([]crawl.Update, perCall)
		for j := range batches[i] {
			off := int64(i*perCall + j)
			batches[i][j] = crawl.Update{TaskID: task, TweetID: "19" + strconv.FormatInt(1e15+off, 10),
				Coord: crawl.Coordinates{Topic: crawl.DataTopicDefault, Partition: 1, Offset: off}}
		}
	}
	calls0, usec0 := evalshaStats(b, rdb)
	b.ResetTimer()
	for _, us := range batches {
		if _, err := s.ApplyBatch(ctx, us); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	calls, usec := evalshaStats(b, rdb)
	if calls > calls0 {
		b.ReportMetric((usec-usec0)/(calls-calls0)/perCall, "redis_us/tweet")
	}
}

// evalshaStats reads how many EVALSHA calls Redis ran and their total time in
// microseconds, from INFO commandstats.
func evalshaStats(b *testing.B, rdb redis.UniversalClient) (calls, usec float64) {
	b.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(info) {
		stats, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for kv := range strings.SplitSeq(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				calls, _ = strconv.ParseFloat(v, 64)
			case "usec":
				usec, _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return calls, usec
}
