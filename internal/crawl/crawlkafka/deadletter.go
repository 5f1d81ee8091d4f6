package crawlkafka

import (
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Dead-letter record headers: why the record was rejected and where it came
// from, so an operator can fix and replay it.
const (
	HeaderDLQReason    = "dlq_reason"
	HeaderDLQTopic     = "dlq_source_topic"
	HeaderDLQPartition = "dlq_source_partition"
	HeaderDLQOffset    = "dlq_source_offset"
)

// DeadLetter is a record that can never be processed, with the reason.
type DeadLetter struct {
	Record *kgo.Record
	Reason string
}

// DeadLetterSink stores rejected records; the partition moves on after Send.
type DeadLetterSink interface {
	Send(ctx context.Context, letters []DeadLetter) error
}

// DeadLetterProducer copies rejected records, unchanged, to a dead-letter topic.
type DeadLetterProducer struct {
	producer *kgo.Client
	topic    string
}

// NewDeadLetterProducer produces to topic with an existing client.
func NewDeadLetterProducer(producer *kgo.Client, topic string) *DeadLetterProducer {
	return &DeadLetterProducer{producer: producer, topic: topic}
}

// Send produces every letter and waits for all acknowledgements.
func (d *DeadLetterProducer) Send(ctx context.Context, letters []DeadLetter) error {
	if len(letters) == 0 {
		return nil
	}
	recs := make([]*kgo.Record, len(letters))
	for i, l := range letters {
		src := l.Record
		headers := append([]kgo.RecordHeader{
			{Key: HeaderDLQReason, Value: []byte(l.Reason)},
			{Key: HeaderDLQTopic, Value: []byte(src.Topic)},
			{Key: HeaderDLQPartition, Value: []byte(strconv.Itoa(int(src.Partition)))},
			{Key: HeaderDLQOffset, Value: []byte(strconv.FormatInt(src.Offset, 10))},
		}, src.Headers...)
		recs[i] = &kgo.Record{Topic: d.topic, Key: src.Key, Value: src.Value, Headers: headers}
	}
	if err := d.producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("send %d records to dead-letter topic %s: %w", len(letters), d.topic, err)
	}
	return nil
}

// HeaderValue returns a record header's value ("" when absent).
func HeaderValue(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
