package crawl

import (
	"context"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// ReplyTask is one reply handed to the downstream task scheduler. A tweet is
// processed once every one of its replies is submitted, so this is the unit
// of work leaving taskloom.
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
// accepted; the tweet is counted after that. The crawlkafka package's
// ReplyProducer implements it over a Kafka topic; a gRPC client to the
// task scheduler could implement it instead.
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

// AppendReplyTasks turns a scraped tweet into one task per reply, appended to dst.
func AppendReplyTasks(dst []ReplyTask, msg RawScrapedDataMessage) []ReplyTask {
	tw := msg.TweetData
	for i, r := range tw.Replies {
		dst = append(dst, ReplyTask{
			OriginalTaskID: msg.OriginalTaskID,
			TweetID:        tw.ID, TweetURL: tw.URL, TweetAuthor: tw.Author, TweetText: tw.FullText,
			ReplyIndex: i, ReplyAuthor: r.Author, ReplyText: r.Text,
			IdempotencyKey: ReplyKey(msg.OriginalTaskID, tw.ID, i),
		})
	}
	return dst
}

// AppendJSON appends t's JSON, byte for byte what json.Marshal(t) writes,
// without reflection: the consumer encodes one per reply, which made it a
// good part of the consumer's time. It fails, as Marshal does, on a string
// that is not valid UTF-8.
func (t ReplyTask) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	str := func(name, v string) {
		dst = append(dst, name...)
		if err == nil {
			dst, err = jsontext.AppendQuote(dst, v)
		}
	}
	dst = append(dst, `{"original_task_id":`...)
	dst = strconv.AppendInt(dst, t.OriginalTaskID, 10)
	str(`,"tweet_id":`, t.TweetID)
	str(`,"tweet_url":`, t.TweetURL)
	str(`,"tweet_author":`, t.TweetAuthor)
	str(`,"tweet_text":`, t.TweetText)
	dst = append(dst, `,"reply_index":`...)
	dst = strconv.AppendInt(dst, int64(t.ReplyIndex), 10)
	str(`,"reply_author":`, t.ReplyAuthor)
	str(`,"reply_text":`, t.ReplyText)
	str(`,"idempotency_key":`, t.IdempotencyKey)
	dst = append(dst, '}')
	return dst, err
}
