// Package crawler stands in for the real crawler (crawl4ai's x.com crawler): for one original
// task it produces the TASK_INIT and the tweets to Kafka, the way the real one does, with optional
// copies of tweets, TASK_INIT last, or tweets announced and never sent. It is the crawler command
// of the dev stack (`dev crawl fake-crawler`) and the load of tests and benchmarks; the production
// binary does not link it.
package crawler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/crawl"
)

// Crawl describes what the fake crawler sends: the crawler contract's
// messages for one original task, the way crawl4ai would.
type Crawl struct {
	OriginalTaskID int64
	// Tweets is how many distinct tweets were "scraped".
	Tweets int
	// DupRate is the share of tweets sent a second time, as a producer
	// retry or a crawler re-sending after a partial failure does: the copy
	// has the same tweet id, total_tweets counts the tweet once, and
	// taskloom does not count the copy.
	DupRate float64
	// InitLast sends TASK_INIT after the data instead of before it.
	InitLast bool
	// RepliesPerTweet is how many replies each tweet carries.
	RepliesPerTweet int
	// Drop is how many announced tweets (the last ones) are never sent,
	// copies included (lost messages): the task can then only end at its
	// completion deadline.
	Drop int
	// Seed makes the choice of duplicated tweets repeatable.
	Seed uint64
}

// Validate rejects settings the real crawler could not produce.
func (f Crawl) Validate() error {
	switch {
	case f.OriginalTaskID <= 0:
		return fmt.Errorf("original task id %d is not positive", f.OriginalTaskID)
	case f.Tweets < 0:
		return fmt.Errorf("tweets %d is negative", f.Tweets)
	case f.DupRate < 0 || f.DupRate > 1:
		return fmt.Errorf("dup rate %v is outside [0,1]", f.DupRate)
	case f.RepliesPerTweet < 0:
		return fmt.Errorf("replies per tweet %d is negative", f.RepliesPerTweet)
	case f.Drop < 0 || f.Drop > f.Tweets:
		return fmt.Errorf("drop %d is outside [0,%d]", f.Drop, f.Tweets)
	}
	return nil
}

// Messages builds the TASK_INIT and the data messages in sending order, a
// copy right after its original. total_tweets is the number of distinct
// tweets, the dropped ones included, as the real crawler announces it.
func (f Crawl) Messages() (crawl.TaskControlMessage, []crawl.RawScrapedDataMessage) {
	rng := rand.New(rand.NewPCG(f.Seed, uint64(f.OriginalTaskID)))
	data := make([]crawl.RawScrapedDataMessage, 0, f.Tweets)
	for i := range f.Tweets - min(f.Drop, f.Tweets) {
		msg := f.tweet(i)
		data = append(data, msg)
		if rng.Float64() < f.DupRate {
			data = append(data, msg)
		}
	}
	init := crawl.TaskControlMessage{Type: crawl.TypeTaskInit, OriginalTaskID: f.OriginalTaskID, TotalTweets: int64(f.Tweets)}
	return init, data
}

func (f Crawl) tweet(i int) crawl.RawScrapedDataMessage {
	id := strconv.FormatInt(f.OriginalTaskID*1_000_000+int64(i), 10)
	replies := make([]crawl.RawReply, f.RepliesPerTweet)
	for r := range replies {
		replies[r] = crawl.RawReply{Author: fmt.Sprintf("replier_%d", r), Text: fmt.Sprintf("reply %d to tweet %s", r, id)}
	}
	return crawl.RawScrapedDataMessage{OriginalTaskID: f.OriginalTaskID, TweetData: crawl.RawTweetData{
		ID: id, URL: "https://x.com/fake/status/" + id, Author: "fake_author",
		FullText:   fmt.Sprintf("fake tweet %d of task %d", i, f.OriginalTaskID),
		ReplyCount: strconv.Itoa(f.RepliesPerTweet), RepostCount: "0", LikeCount: "0",
		BookmarkCount: "0", ViewCount: "0", Replies: replies,
	}}
}

// Records encodes the messages as Kafka records in sending order. Tweets are
// keyed by id (spreading them over partitions), TASK_INIT by task id.
func (f Crawl) Records(topics crawl.Topics) ([]*kgo.Record, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	init, data := f.Messages()
	initValue, err := json.Marshal(init)
	if err != nil {
		return nil, fmt.Errorf("encode TASK_INIT: %w", err)
	}
	initRec := &kgo.Record{Topic: topics.Control, Key: []byte(strconv.FormatInt(f.OriginalTaskID, 10)), Value: initValue}
	recs := make([]*kgo.Record, 0, len(data)+1)
	if !f.InitLast {
		recs = append(recs, initRec)
	}
	for _, m := range data {
		v, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode tweet %s: %w", m.TweetData.ID, err)
		}
		recs = append(recs, &kgo.Record{Topic: topics.Data, Key: []byte(m.TweetData.ID), Value: v})
	}
	if f.InitLast {
		recs = append(recs, initRec)
	}
	return recs, nil
}

// Produce sends the fake crawl and returns the number of tweet records sent,
// copies included: Records, then Send.
func (f Crawl) Produce(ctx context.Context, cl *kgo.Client, topics crawl.Topics) (int64, error) {
	recs, err := f.Records(topics)
	if err != nil {
		return 0, err
	}
	return f.Send(ctx, cl, recs)
}

// Send produces records made by Records and returns the number of tweet
// records sent. TASK_INIT and the data are two acknowledged steps, so
// "TASK_INIT last" really reaches the broker after every tweet. Benchmarks
// encode with Records first, so that only sending is timed.
func (f Crawl) Send(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) (int64, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	steps := [][]*kgo.Record{recs[:1], recs[1:]}
	if f.InitLast {
		steps = [][]*kgo.Record{recs[:len(recs)-1], recs[len(recs)-1:]}
	}
	for _, step := range steps {
		if err := cl.ProduceSync(ctx, step...).FirstErr(); err != nil {
			return 0, fmt.Errorf("fake crawler for task %d: produce: %w", f.OriginalTaskID, err)
		}
	}
	return int64(len(recs) - 1), nil
}
