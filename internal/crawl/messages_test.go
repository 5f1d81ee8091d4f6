package crawl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

const messagesDir = "../../testdata/crawl/messages"

func readMessage(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(messagesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func messageCorpus(t testing.TB) [][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(messagesDir, "*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("seed corpus under %s: %v", messagesDir, err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestParseTaskControl(t *testing.T) {
	got, err := ParseTaskControl(readMessage(t, "control_valid.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (TaskControlMessage{Type: TypeTaskInit, OriginalTaskID: 123, TotalTweets: 450}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	bad := map[string]string{
		"wrong type":     string(readMessage(t, "control_wrong_type.json")),
		"string total":   string(readMessage(t, "control_string_total.json")),
		"missing type":   `{"original_task_id":1,"total_tweets":1}`,
		"null id":        `{"type":"TASK_INIT","original_task_id":null,"total_tweets":1}`,
		"missing total":  `{"type":"TASK_INIT","original_task_id":1}`,
		"negative total": `{"type":"TASK_INIT","original_task_id":1,"total_tweets":-1}`,
		"zero id":        `{"type":"TASK_INIT","original_task_id":0,"total_tweets":1}`,
		"fractional id":  `{"type":"TASK_INIT","original_task_id":1.5,"total_tweets":1}`,
		"wrong case":     `{"TYPE":"TASK_INIT","original_task_id":1,"total_tweets":1}`,
		"duplicate key":  `{"type":"TASK_INIT","type":"TASK_INIT","original_task_id":1,"total_tweets":1}`,
		"trailing":       `{"type":"TASK_INIT","original_task_id":1,"total_tweets":1} x`,
		"array":          `[]`,
		"empty":          ``,
	}
	for name, in := range bad {
		if _, err := ParseTaskControl([]byte(in)); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("%s: err = %v, want ErrInvalidMessage", name, err)
		}
	}
}

func TestParseRawScrapedData(t *testing.T) {
	got, err := ParseRawScrapedData(readMessage(t, "data_valid.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got.OriginalTaskID != 123 || got.TweetData.ID != "1977372429597954366" || got.TweetData.FullText != "hello 世界" ||
		len(got.TweetData.Replies) != 2 || got.TweetData.Replies[1] != (RawReply{Author: "b", Text: "second"}) {
		t.Fatalf("parsed %+v", got)
	}
	noReplies, err := ParseRawScrapedData(readMessage(t, "data_no_replies.json"))
	if err != nil {
		t.Fatalf("replies default to none and unknown fields are ignored, as with serde: %v", err)
	}
	if len(noReplies.TweetData.Replies) != 0 {
		t.Fatalf("replies = %v", noReplies.TweetData.Replies)
	}
	bad := map[string]string{
		"missing url":    string(readMessage(t, "data_missing_url.json")),
		"not json":       string(readMessage(t, "data_not_json.txt")),
		"missing tweet":  `{"original_task_id":1}`,
		"tweet not obj":  `{"original_task_id":1,"tweet_data":"x"}`,
		"id as number":   strings.Replace(string(readMessage(t, "data_valid.json")), `"1977372429597954366"`, `1977372429597954366`, 1),
		"empty id":       strings.Replace(string(readMessage(t, "data_valid.json")), `"1977372429597954366"`, `""`, 1),
		"reply no text":  strings.Replace(string(readMessage(t, "data_valid.json")), `"text": "first"`, `"txt": "first"`, 1),
		"null reply":     strings.Replace(string(readMessage(t, "data_valid.json")), `{"author": "a", "text": "first"}`, `null`, 1),
		"task id string": strings.Replace(string(readMessage(t, "data_valid.json")), `"original_task_id": 123`, `"original_task_id": "123"`, 1),
	}
	for name, in := range bad {
		if _, err := ParseRawScrapedData([]byte(in)); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("%s: err = %v, want ErrInvalidMessage", name, err)
		}
	}
}

func TestNamedTaskID(t *testing.T) {
	msg := func(name string) string { return string(readMessage(t, name)) }
	cases := []struct {
		name, in string
		want     int64 // 0: names no task
	}{
		{"valid data", msg("data_valid.json"), 123},
		{"valid control", msg("control_valid.json"), 123},
		{"truncated", msg("data_not_json.txt"), 5},
		{"wrong type", msg("control_wrong_type.json"), 123},
		{"string total", msg("control_string_total.json"), 123},
		{"task id as string", msg("data_task_id_string.json"), 123},
		{"missing field", msg("data_missing_url.json"), 5},
		{"nested is not the key", `{"tweet_data":{"original_task_id":1},"original_task_id":2}`, 2},
		{"repeated, same value", `{"original_task_id":1,"original_task_id":1}`, 1},
		{"number ended by space", `{"original_task_id": 401 `, 401},
		{"two task ids", msg("data_two_task_ids.json"), 0},
		{"first unreadable", `{"original_task_id":"x","original_task_id":1}`, 0},
		{"cut in the id", `{"original_task_id": 401`, 0},
		{"zero", `{"original_task_id":0}`, 0},
		{"negative", `{"original_task_id":-3}`, 0},
		{"fractional", `{"original_task_id":1.5}`, 0},
		{"exponent", `{"original_task_id":1e3}`, 0},
		{"signed string", `{"original_task_id":"+3"}`, 0},
		{"null", `{"original_task_id":null}`, 0},
		{"too large", `{"original_task_id":9223372036854775808}`, 0},
		{"only nested", `{"tweet_data":{"original_task_id":1}}`, 0},
		{"wrong case", `{"ORIGINAL_TASK_ID":1}`, 0},
		{"array", `[{"original_task_id":1}]`, 0},
		{"not json", `original_task_id=1`, 0},
		{"empty", ``, 0},
	}
	for _, tc := range cases {
		if id, ok := NamedTaskID([]byte(tc.in)); id != tc.want || ok != (tc.want > 0) {
			t.Errorf("%s: NamedTaskID = %d, %v; want %d", tc.name, id, ok, tc.want)
		}
	}
}

// FuzzParseTaskControl: never panics; whatever parses obeys the contract and
// survives a round trip through the wire format.
func FuzzParseTaskControl(f *testing.F) {
	for _, b := range messageCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseTaskControl(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("error %v does not wrap ErrInvalidMessage", err)
			}
			return
		}
		if m.Type != TypeTaskInit || m.OriginalTaskID <= 0 || m.TotalTweets < 0 {
			t.Fatalf("accepted %+v", m)
		}
		again, err := ParseTaskControl(mustMarshal(t, m))
		if err != nil || again != m {
			t.Fatalf("round trip %+v -> %+v, %v", m, again, err)
		}
	})
}

func FuzzParseRawScrapedData(f *testing.F) {
	for _, b := range messageCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseRawScrapedData(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("error %v does not wrap ErrInvalidMessage", err)
			}
			return
		}
		if m.OriginalTaskID <= 0 || m.TweetData.ID == "" {
			t.Fatalf("accepted %+v", m)
		}
		again, err := ParseRawScrapedData(mustMarshal(t, m))
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip %+v -> %+v, %v", m, again, err)
		}
	})
}

// FuzzNamedTaskID: never panics, names only positive ids, and agrees with
// the strict parsers on every record they accept.
func FuzzNamedTaskID(f *testing.F) {
	for _, b := range messageCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id, ok := NamedTaskID(b)
		if ok && id <= 0 || !ok && id != 0 {
			t.Fatalf("NamedTaskID = %d, %v", id, ok)
		}
		if m, err := ParseTaskControl(b); err == nil && (!ok || id != m.OriginalTaskID) {
			t.Fatalf("control message of task %d: NamedTaskID = %d, %v", m.OriginalTaskID, id, ok)
		}
		if m, err := ParseRawScrapedData(b); err == nil && (!ok || id != m.OriginalTaskID) {
			t.Fatalf("tweet of task %d: NamedTaskID = %d, %v", m.OriginalTaskID, id, ok)
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The common record takes the fast path (a record with replies, one
// without); a record with an empty required field is left to the strict
// path. Without this the fuzz target below would pass with a fast path that
// never answers.
func TestParseCommonScrapedTakesTheCommonRecord(t *testing.T) {
	for _, name := range []string{"data_valid.json", "data_no_replies.json"} {
		if _, ok := parseCommonScraped(readMessage(t, name)); !ok {
			t.Errorf("%s: the fast path left it to the strict path", name)
		}
	}
	empty := strings.Replace(string(readMessage(t, "data_valid.json")), `"hello 世界"`, `""`, 1)
	if _, ok := parseCommonScraped([]byte(empty)); ok {
		t.Error("the fast path took a record with an empty full_text")
	}
}

// FuzzParseRawScrapedDataPaths: the common record's fast path answers every
// record exactly as the strict path alone would, the message or the error
// (a dead letter's reason) alike.
func FuzzParseRawScrapedDataPaths(f *testing.F) {
	for _, b := range messageCorpus(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"original_task_id":7,"tweet_data":{"id":"1","url":"u","author":"a","full_text":"","reply_count":"0","repost_count":"0","like_count":"0","bookmark_count":"0","view_count":"0"}}`))
	f.Add([]byte(`{"original_task_id":7,"tweet_data":{"id":"1","url":"u","author":"a","full_text":"t","reply_count":"0","repost_count":"0","like_count":"0","bookmark_count":"0","view_count":"0","replies":[null]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gotErr := ParseRawScrapedData(b)
		want, wantErr := parseStrictScraped(b)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseRawScrapedData = %#v, %v\nstrict path = %#v, %v", got, gotErr, want, wantErr)
		}
	})
}

// go test -run XXX -bench ParseRawScrapedData ./internal/crawl/
func BenchmarkParseRawScrapedData(b *testing.B) {
	record := readMessage(b, "data_valid.json")
	for _, tc := range []struct {
		name  string
		parse func([]byte) (RawScrapedDataMessage, error)
	}{{"common", ParseRawScrapedData}, {"strict", parseStrictScraped}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.parse(record); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
