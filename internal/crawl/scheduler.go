package crawl

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ReplyTask is one reply handed to the downstream task scheduler. The seed
// defines completion as "every reply submitted", so this is the unit of work
// leaving taskloom.
type ReplyTask struct {
	OriginalTaskID int64  `json:"original_task_id"`
	TweetID        string `json:"tweet_id"`
	TweetURL       string `json:"tweet_url"`
	TweetAuthor    string `json:"tweet_author"`
	TweetText      string `json:"tweet_text"`
	ReplyIndex     int    `json:"reply_index"`
	ReplyAuthor    string `json:"reply_author"`
	ReplyText      string `json:"reply_text"`
	// IdempotencyKey is ReplyKey(original_task_id, tweet id, reply index):
	// a redelivered record and a copy of the tweet the crawler sent again
	// (any offset, any partition) repeat it, so the scheduler drops them.
	IdempotencyKey string `json:"idempotency_key"`
}

// Scheduler receives reply tasks. Submit returns only once every task is
// accepted; the tweet is counted after that. A gRPC client to the seed's
// task_scheduler can implement it instead of the Kafka producer.
type Scheduler interface {
	Submit(ctx context.Context, tasks []ReplyTask) error
}

// ReplyKey is the idempotency key of one reply: "crawl:<original_task_id>:
// <tweet id>:<reply index>". It names the reply, not the Kafka record that
// carried it. The task id and index are numbers, so the key stays
// unambiguous whatever the tweet id holds.
func ReplyKey(originalTaskID int64, tweetID string, replyIndex int) string {
	return "crawl:" + strconv.FormatInt(originalTaskID, 10) + ":" + tweetID + ":" + strconv.Itoa(replyIndex)
}

// ReplyTasks turns a scraped tweet into one task per reply.
func ReplyTasks(msg RawScrapedDataMessage) []ReplyTask {
	tw := msg.TweetData
	tasks := make([]ReplyTask, len(tw.Replies))
	for i, r := range tw.Replies {
		tasks[i] = ReplyTask{
			OriginalTaskID: msg.OriginalTaskID,
			TweetID:        tw.ID, TweetURL: tw.URL, TweetAuthor: tw.Author, TweetText: tw.FullText,
			ReplyIndex: i, ReplyAuthor: r.Author, ReplyText: r.Text,
			IdempotencyKey: ReplyKey(msg.OriginalTaskID, tw.ID, i),
		}
	}
	return tasks
}

// KafkaScheduler hands reply tasks to the scheduler through a Kafka topic,
// keyed by tweet id so one tweet's replies stay in order on one partition.
type KafkaScheduler struct {
	producer *kgo.Client
	topic    string
}

// NewKafkaScheduler produces to topic with an existing client.
func NewKafkaScheduler(producer *kgo.Client, topic string) *KafkaScheduler {
	return &KafkaScheduler{producer: producer, topic: topic}
}

// Submit produces every task and waits for all acknowledgements.
func (s *KafkaScheduler) Submit(ctx context.Context, tasks []ReplyTask) error {
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
