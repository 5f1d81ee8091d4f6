package crawlkafka

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawlprom"
	"github.com/taskloom/taskloom/internal/testenv"
)

const (
	testDLQTopic       = "crawl_dead_letter"
	testSchedulerTopic = "crawl_reply_tasks"
	testPartitions     = 4
)

var testTopics = crawl.Topics{Control: crawl.ControlTopicDefault, Data: crawl.DataTopicDefault}

// recordingNotifier stands in for the workflow and remembers calls.
type recordingNotifier struct {
	mu        sync.Mutex
	calls     map[int64]int
	announced map[int64]int
	// byInit counts completions whose last counted record was a TASK_INIT.
	byInit map[int64]int
	// onComplete, when set before the consumer starts, runs after each
	// completion is recorded, in the middle of the batch that made it.
	onComplete func()
}

func (n *recordingNotifier) TaskAnnounced(_ context.Context, id int64) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.announced == nil {
		n.announced = map[int64]int{}
	}
	n.announced[id]++
	return nil
}

func (n *recordingNotifier) announcements(task int64) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.announced[task]
}

func (n *recordingNotifier) TaskCompleted(_ context.Context, c crawl.Completion) error {
	if n.onComplete != nil {
		defer n.onComplete()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.calls == nil {
		n.calls = map[int64]int{}
	}
	n.calls[c.OriginalTaskID]++
	if c.CompletedBy.Topic == testTopics.Control {
		if n.byInit == nil {
			n.byInit = map[int64]int{}
		}
		n.byInit[c.OriginalTaskID]++
	}
	return nil
}

// completedByInit is how many completions of task a TASK_INIT made.
func (n *recordingNotifier) completedByInit(task int64) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byInit[task]
}

func (n *recordingNotifier) count(task int64) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[task]
}

// kafkaHarness is an in-process kfake cluster with the crawl topics, a
// producer, and everything a Processor needs.
type kafkaHarness struct {
	cluster    *kfake.Cluster
	brokers    []string
	producer   *kgo.Client
	store      *countscript.Store
	rdb        redis.UniversalClient
	prefix     string
	notifier   *recordingNotifier
	registry   *prometheus.Registry
	metrics    *crawlprom.Metrics
	group      string
	failCommit atomic.Bool
}

func newKafkaHarness(t testing.TB, partitions int32) *kafkaHarness {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1),
		kfake.SeedTopics(partitions, testTopics.Control, testTopics.Data, testDLQTopic, testSchedulerTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	h := &kafkaHarness{cluster: cluster, brokers: cluster.ListenAddrs(), notifier: &recordingNotifier{},
		group: testenv.Unique("g-"), registry: prometheus.NewRegistry()}
	h.metrics = crawlprom.New(h.registry)
	h.producer, err = kgo.NewClient(kgo.SeedBrokers(h.brokers...), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.producer.Close)
	h.rdb, h.prefix = testenv.Redis(t)
	h.store = countscript.New(h.rdb, h.prefix, time.Hour, 24*time.Hour)
	// Commits fail while failCommit is set: the consumer "dies" before its
	// offsets reach the broker, as a killed process would.
	cluster.ControlKey(kmsg.OffsetCommit.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		if !h.failCommit.Load() {
			return nil, nil, false
		}
		return failedCommit(req.(*kmsg.OffsetCommitRequest)), nil, true
	})
	return h
}

func failedCommit(req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = kerr.InvalidCommitOffsetSize.Code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (h *kafkaHarness) processor(log *slog.Logger) *Processor {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Processor{
		Topics:      testTopics,
		Store:       h.store,
		Scheduler:   NewReplyProducer(h.producer, testSchedulerTopic),
		DeadLetters: NewDeadLetterProducer(h.producer, testDLQTopic),
		Workflows:   h.notifier,
		Log:         log,
		Metrics:     h.metrics,
	}
}

// startConsumer runs a group member until the returned stop is called.
func (h *kafkaHarness) startConsumer(t testing.TB) (stop func()) {
	t.Helper()
	return testenv.Go(t, h.consumer(t).Run)
}

// consumer is a group member with short commit and fetch intervals.
func (h *kafkaHarness) consumer(t testing.TB) *Consumer {
	t.Helper()
	c, err := NewConsumer(ConsumerConfig{Brokers: h.brokers, Group: h.group, Topics: testTopics,
		ExtraOpts: []kgo.Opt{kgo.AutoCommitInterval(100 * time.Millisecond), kgo.FetchMaxWait(50 * time.Millisecond)}},
		h.processor(nil))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (h *kafkaHarness) produce(t testing.TB, recs ...*kgo.Record) {
	t.Helper()
	if err := h.producer.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readTopic returns every record of topic once at least want arrived.
func (h *kafkaHarness) readTopic(t testing.TB, topic string, want int) []*kgo.Record {
	t.Helper()
	return testenv.ReadTopic(t, h.brokers, topic, want)
}

// awaitReturn waits up to d for a Run that reports on done to return nil.
func awaitReturn(t testing.TB, done <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(d):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *kafkaHarness) progress(t testing.TB, task int64) crawl.Progress {
	t.Helper()
	p, err := h.store.Get(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorded is the records counter of a topic and result.
func (h *kafkaHarness) recorded(topic string, result string) int {
	return h.counter("taskloom_crawl_records_total", "topic", topic, "result", result)
}

// counter sums the series of the counter name whose labels include every
// name, value pair of labels.
func (h *kafkaHarness) counter(name string, labels ...string) int {
	families, err := h.registry.Gather()
	if err != nil {
		panic(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return int(sum)
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
