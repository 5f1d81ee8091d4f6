package crawl

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Topic names and the control message type are fixed by the crawler's
// contract: the existing crawler produces exactly these.
const (
	ControlTopicDefault = "task_control_topic"
	DataTopicDefault    = "x_com_scraped_data"
	TypeTaskInit        = "TASK_INIT"
)

// TaskControlMessage is the crawler's control message: it announces how many
// distinct tweets it sends for an original task.
type TaskControlMessage struct {
	Type           string `json:"type"`
	OriginalTaskID int64  `json:"original_task_id"`
	TotalTweets    int64  `json:"total_tweets"`
}

// RawScrapedDataMessage is the crawler's data message: one scraped tweet.
type RawScrapedDataMessage struct {
	OriginalTaskID int64        `json:"original_task_id"`
	TweetData      RawTweetData `json:"tweet_data"`
}

// RawTweetData is a scraped tweet. Every field but replies is required: the
// contract's reference consumer (Rust, serde) has no default for them, so
// parsing requires them too.
type RawTweetData struct {
	ID            string     `json:"id"`
	URL           string     `json:"url"`
	Author        string     `json:"author"`
	FullText      string     `json:"full_text"`
	ReplyCount    string     `json:"reply_count"`
	RepostCount   string     `json:"repost_count"`
	LikeCount     string     `json:"like_count"`
	BookmarkCount string     `json:"bookmark_count"`
	ViewCount     string     `json:"view_count"`
	Replies       []RawReply `json:"replies"`
}

// RawReply is one reply of a tweet; each becomes one downstream task.
type RawReply struct {
	Author string `json:"author"`
	Text   string `json:"text"`
}

// ErrInvalidMessage marks a record that can never be processed; the consumer
// sends it to the dead-letter topic instead of retrying it.
var ErrInvalidMessage = errors.New("invalid message")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidMessage, fmt.Sprintf(format, args...))
}

// wireControl uses pointers so that a missing or null field is told apart
// from a zero value: the contract's reference consumer rejects both, and so
// do we.
type wireControl struct {
	Type           *string `json:"type"`
	OriginalTaskID *int64  `json:"original_task_id"`
	TotalTweets    *int64  `json:"total_tweets"`
}

// ParseTaskControl decodes a task_control_topic record. The JSON decoder is
// case-sensitive and rejects duplicate keys (unlike encoding/json v1), which
// matches what the contract's reference consumer (Rust, serde) accepts.
func ParseTaskControl(b []byte) (TaskControlMessage, error) {
	var w wireControl
	if err := json.Unmarshal(b, &w); err != nil {
		return TaskControlMessage{}, invalid("decode TaskControlMessage: %v", err)
	}
	switch {
	case w.Type == nil:
		return TaskControlMessage{}, invalid("type is missing")
	case *w.Type != TypeTaskInit:
		return TaskControlMessage{}, invalid("type %q is not %s", *w.Type, TypeTaskInit)
	case w.OriginalTaskID == nil:
		return TaskControlMessage{}, invalid("original_task_id is missing")
	case *w.OriginalTaskID <= 0:
		return TaskControlMessage{}, invalid("original_task_id %d is not positive", *w.OriginalTaskID)
	case w.TotalTweets == nil:
		return TaskControlMessage{}, invalid("total_tweets is missing")
	case *w.TotalTweets < 0:
		return TaskControlMessage{}, invalid("total_tweets %d is negative", *w.TotalTweets)
	}
	return TaskControlMessage{Type: *w.Type, OriginalTaskID: *w.OriginalTaskID, TotalTweets: *w.TotalTweets}, nil
}

type wireScraped struct {
	OriginalTaskID *int64     `json:"original_task_id"`
	TweetData      *wireTweet `json:"tweet_data"`
}

type wireTweet struct {
	ID            *string      `json:"id"`
	URL           *string      `json:"url"`
	Author        *string      `json:"author"`
	FullText      *string      `json:"full_text"`
	ReplyCount    *string      `json:"reply_count"`
	RepostCount   *string      `json:"repost_count"`
	LikeCount     *string      `json:"like_count"`
	BookmarkCount *string      `json:"bookmark_count"`
	ViewCount     *string      `json:"view_count"`
	Replies       []*wireReply `json:"replies"`
}

type wireReply struct {
	Author *string `json:"author"`
	Text   *string `json:"text"`
}

// ParseRawScrapedData decodes an x_com_scraped_data record with the same
// required fields as the contract's reference consumer; replies default to
// none.
func ParseRawScrapedData(b []byte) (RawScrapedDataMessage, error) {
	if m, ok := parseCommonScraped(b); ok {
		return m, nil
	}
	return parseStrictScraped(b)
}

// parseCommonScraped decodes the common record — every required field
// present and not empty — straight into the message. There a field's value
// says it was present, so the strict path's presence tracking (a pointer per
// field, an allocation each: ~40% of the record's decoding) is not needed.
// Anything else (a field empty, null or missing, a wrong type, broken JSON)
// reports false and is decided by parseStrictScraped, errors included, so a
// record gets the same answer and the same dead-letter reason whichever
// path read it (FuzzParseRawScrapedDataPaths).
func parseCommonScraped(b []byte) (RawScrapedDataMessage, bool) {
	var m RawScrapedDataMessage
	if json.Unmarshal(b, &m) != nil || m.OriginalTaskID <= 0 {
		return RawScrapedDataMessage{}, false
	}
	t := &m.TweetData
	for _, v := range [...]string{t.ID, t.URL, t.Author, t.FullText, t.ReplyCount, t.RepostCount, t.LikeCount,
		t.BookmarkCount, t.ViewCount} {
		if v == "" {
			return RawScrapedDataMessage{}, false
		}
	}
	for _, r := range t.Replies {
		if r.Author == "" || r.Text == "" {
			return RawScrapedDataMessage{}, false
		}
	}
	if t.Replies == nil {
		t.Replies = []RawReply{} // as the strict path: none, not nil
	}
	return m, true
}

// parseStrictScraped decodes any record, telling a missing or null field
// from an empty one.
func parseStrictScraped(b []byte) (RawScrapedDataMessage, error) {
	var w wireScraped
	if err := json.Unmarshal(b, &w); err != nil {
		return RawScrapedDataMessage{}, invalid("decode RawScrapedDataMessage: %v", err)
	}
	switch {
	case w.OriginalTaskID == nil:
		return RawScrapedDataMessage{}, invalid("original_task_id is missing")
	case *w.OriginalTaskID <= 0:
		return RawScrapedDataMessage{}, invalid("original_task_id %d is not positive", *w.OriginalTaskID)
	case w.TweetData == nil:
		return RawScrapedDataMessage{}, invalid("tweet_data is missing")
	}
	tweet, err := w.TweetData.toTweet()
	if err != nil {
		return RawScrapedDataMessage{}, err
	}
	return RawScrapedDataMessage{OriginalTaskID: *w.OriginalTaskID, TweetData: tweet}, nil
}

func (w *wireTweet) toTweet() (RawTweetData, error) {
	fields := []struct {
		name string
		v    *string
	}{
		{"id", w.ID}, {"url", w.URL}, {"author", w.Author}, {"full_text", w.FullText},
		{"reply_count", w.ReplyCount}, {"repost_count", w.RepostCount}, {"like_count", w.LikeCount},
		{"bookmark_count", w.BookmarkCount}, {"view_count", w.ViewCount},
	}
	for _, f := range fields {
		if f.v == nil {
			return RawTweetData{}, invalid("tweet_data.%s is missing", f.name)
		}
	}
	// The tweet id keys the downstream tasks, so an empty one is useless.
	if *w.ID == "" {
		return RawTweetData{}, invalid("tweet_data.id is empty")
	}
	replies := make([]RawReply, 0, len(w.Replies))
	for i, r := range w.Replies {
		switch {
		case r == nil:
			return RawTweetData{}, invalid("tweet_data.replies[%d] is null", i)
		case r.Author == nil:
			return RawTweetData{}, invalid("tweet_data.replies[%d].author is missing", i)
		case r.Text == nil:
			return RawTweetData{}, invalid("tweet_data.replies[%d].text is missing", i)
		}
		replies = append(replies, RawReply{Author: *r.Author, Text: *r.Text})
	}
	return RawTweetData{
		ID: *w.ID, URL: *w.URL, Author: *w.Author, FullText: *w.FullText,
		ReplyCount: *w.ReplyCount, RepostCount: *w.RepostCount, LikeCount: *w.LikeCount,
		BookmarkCount: *w.BookmarkCount, ViewCount: *w.ViewCount, Replies: replies,
	}, nil
}

// NamedTaskID reads the top-level original_task_id of a record that may be
// otherwise unusable (truncated or malformed JSON, a missing or mistyped
// field), so that its dead letter can be counted against the task it names.
// It reads the object up to where it breaks and accepts a positive integer,
// as a number or, since a crawler sending the wrong type still names its
// task, as a string of digits. A record that names no task, or names two
// (the key repeated with different values), names none: counting it
// against a guess would be wrong.
func NamedTaskID(b []byte) (int64, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, false
	}
	var id int64
	for {
		name, err := dec.ReadToken()
		if err != nil || name.Kind() != '"' {
			return id, id > 0 // the object ended, or broke here
		}
		if name.String() != "original_task_id" {
			if dec.SkipValue() != nil {
				return id, id > 0
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil || v.Kind() == '0' && dec.InputOffset() == int64(len(b)) {
			return id, id > 0 // broke here; a number at the very end may be cut short
		}
		n, ok := taskIDValue(v)
		if !ok || id > 0 && n != id {
			return 0, false
		}
		id = n
	}
}

// taskIDValue is a positive integer written as a JSON number or a string of
// digits.
func taskIDValue(v jsontext.Value) (int64, bool) {
	digits := string(v)
	if v.Kind() == '"' {
		if err := json.Unmarshal(v, &digits); err != nil {
			return 0, false
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
