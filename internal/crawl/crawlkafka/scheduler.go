package crawlkafka

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
)

// ReplyProducer hands reply tasks to the scheduler through a Kafka topic,
// keyed by tweet id so one tweet's replies stay in order on one partition.
// It implements crawl.Scheduler.
type ReplyProducer struct {
	producer *kgo.Client
	topic    string
}

// NewReplyProducer produces to topic with an existing client.
func NewReplyProducer(producer *kgo.Client, topic string) *ReplyProducer {
	return &ReplyProducer{producer: producer, topic: topic}
}

// Submit produces every task and waits for all acknowledgements.
func (s *ReplyProducer) Submit(ctx context.Context, tasks []crawl.ReplyTask) error {
	if len(tasks) == 0 {
		return nil
	}
	recs := make([]*kgo.Record, len(tasks))
	for i, t := range tasks {
		v, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("encode reply task %s: %w", t.IdempotencyKey, err)
		}
		recs[i] = &kgo.Record{Topic: s.topic, Key: []byte(t.TweetID), Value: v,
			Headers: []kgo.RecordHeader{{Key: "idempotency_key", Value: []byte(t.IdempotencyKey)}}}
	}
	if err := s.producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("submit %d reply tasks to %s: %w", len(tasks), s.topic, err)
	}
	return nil
}
