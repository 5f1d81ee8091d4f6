package crawlkafka

import (
	"context"
	"fmt"

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

// replyBytesGuess is a reply task's size in bytes with its key and header,
// for sizing a batch's buffer (a guess: the buffer grows when it is short).
const replyBytesGuess = 512

// NewReplyProducer produces to topic with an existing client.
func NewReplyProducer(producer *kgo.Client, topic string) *ReplyProducer {
	return &ReplyProducer{producer: producer, topic: topic}
}

// Submit produces every task and waits for all acknowledgements.
func (s *ReplyProducer) Submit(ctx context.Context, tasks []crawl.ReplyTask) error {
	if len(tasks) == 0 {
		return nil
	}
	// One allocation each for the records, their headers and their bytes
	// (keys, values, header values: slices of buf, which grows by
	// reallocating, so earlier slices keep the bytes they were given).
	recs := make([]kgo.Record, len(tasks))
	headers := make([]kgo.RecordHeader, len(tasks))
	buf := make([]byte, 0, len(tasks)*replyBytesGuess)
	ptrs := make([]*kgo.Record, len(tasks))
	for i, t := range tasks {
		start := len(buf)
		buf = append(buf, t.TweetID...)
		key := buf[start:len(buf):len(buf)]
		start = len(buf)
		buf = append(buf, t.IdempotencyKey...)
		idem := buf[start:len(buf):len(buf)]
		start = len(buf)
		var err error
		if buf, err = t.AppendJSON(buf); err != nil {
			return fmt.Errorf("encode reply task %s: %w", t.IdempotencyKey, err)
		}
		headers[i] = kgo.RecordHeader{Key: "idempotency_key", Value: idem}
		recs[i] = kgo.Record{Topic: s.topic, Key: key, Value: buf[start:len(buf):len(buf)], Headers: headers[i : i+1 : i+1]}
		ptrs[i] = &recs[i]
	}
	if err := s.producer.ProduceSync(ctx, ptrs...).FirstErr(); err != nil {
		return fmt.Errorf("submit %d reply tasks to %s: %w", len(tasks), s.topic, err)
	}
	return nil
}
