package crawler

import (
	"testing"

	"github.com/taskloom/taskloom/internal/crawl"
)

var testTopics = crawl.Topics{Control: crawl.ControlTopicDefault, Data: crawl.DataTopicDefault}

func TestCrawlMessages(t *testing.T) {
	f := Crawl{OriginalTaskID: 5, Tweets: 100, DupRate: 0.2, RepliesPerTweet: 3, Drop: 4, Seed: 3}
	init, data := f.Messages()
	if init.Type != crawl.TypeTaskInit || init.OriginalTaskID != 5 {
		t.Fatalf("init = %+v", init)
	}
	// total_tweets counts distinct tweets, dropped ones included; copies
	// repeat an id and are not announced.
	ids := map[string]int{}
	for _, m := range data {
		ids[m.TweetData.ID]++
	}
	if init.TotalTweets != 100 || len(ids) != 96 || len(data) <= 96 {
		t.Fatalf("total %d, %d distinct of %d sent", init.TotalTweets, len(ids), len(data))
	}
	_, again := f.Messages()
	if len(again) != len(data) || again[7].TweetData.ID != data[7].TweetData.ID {
		t.Fatal("same seed must give the same crawl")
	}
	if len(data[0].TweetData.Replies) != 3 {
		t.Fatalf("replies = %d", len(data[0].TweetData.Replies))
	}
	recs, err := f.Records(testTopics)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Topic != testTopics.Control || len(recs) != len(data)+1 {
		t.Fatalf("first record on %s, %d records", recs[0].Topic, len(recs))
	}
	// Every produced record parses back with the strict parsers.
	if _, err := crawl.ParseTaskControl(recs[0].Value); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		if _, err := crawl.ParseRawScrapedData(r.Value); err != nil {
			t.Fatal(err)
		}
	}
	last, err := Crawl{OriginalTaskID: 5, Tweets: 2, InitLast: true}.Records(testTopics)
	if err != nil || last[len(last)-1].Topic != testTopics.Control {
		t.Fatalf("init-last order wrong: %v", err)
	}
	for _, bad := range []Crawl{{OriginalTaskID: 0}, {OriginalTaskID: 1, DupRate: 2}, {OriginalTaskID: 1, Tweets: 1, Drop: 2}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
