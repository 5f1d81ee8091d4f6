package crawlkafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
)

// BenchmarkCrawlCount4Partitions measures tweets counted per second through
// the whole consumer (parse, hand 2 replies each to the scheduler topic,
// count in Redis, mark and commit) over 4 partitions, and in the same run a
// bare franz-go group consumer that only consumes and commits the same
// records. ratio_vs_raw is crawl throughput / raw throughput.
//
//	go test -run XXX -bench CrawlCount -benchtime 20000x ./internal/crawl/crawlkafka/
func BenchmarkCrawlCount4Partitions(b *testing.B) {
	h := newKafkaHarness(b, testPartitions)
	f := crawler.Crawl{OriginalTaskID: 900, Tweets: b.N, RepliesPerTweet: 2}
	total, err := f.Produce(context.Background(), h.producer, testTopics)
	if err != nil {
		b.Fatal(err)
	}

	rawPerSec := rawConsumeCommit(b, h, total)

	b.ResetTimer()
	start := time.Now()
	stop := h.startConsumer(b)
	for h.notifier.count(900) == 0 {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()

	perSec := float64(total) / elapsed.Seconds()
	b.ReportMetric(perSec, "tweets/s")
	b.ReportMetric(rawPerSec, "raw_records/s")
	b.ReportMetric(perSec/rawPerSec, "ratio_vs_raw")
}

// rawConsumeCommit is the baseline: a franz-go group member that consumes
// the data topic, marks every record and commits, doing nothing else.
func rawConsumeCommit(b *testing.B, h *kafkaHarness, want int64) float64 {
	b.Helper()
	start := time.Now()
	cl, err := kgo.NewClient(kgo.SeedBrokers(h.brokers...), kgo.ConsumerGroup("raw-"+h.group),
		kgo.ConsumeTopics(testTopics.Data), kgo.AutoCommitMarks(), kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	var got int64
	for got < want {
		fetches := cl.PollRecords(ctx, 4*BatchSizeDefault)
		recs := fetches.Records()
		cl.MarkCommitRecords(recs...)
		got += int64(len(recs))
	}
	if err := cl.CommitMarkedOffsets(ctx); err != nil {
		b.Fatal(err)
	}
	return float64(want) / time.Since(start).Seconds()
}
