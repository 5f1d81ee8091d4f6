package crawl

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
)

// AppendJSON must write exactly what json.Marshal writes: the scheduler reads
// the same bytes whichever encoder ran.
func TestReplyTaskAppendJSONEqualsMarshal(t *testing.T) {
	texts := []string{"", "plain", `quote " and \ backslash`, "line\nbreak\ttab\r\x00\x1f", "<b>&amp;</b>",
		"hello 世界 🎉", "\u2028\u2029", "\x7f", "slash /"}
	for _, s := range texts {
		task := ReplyTask{OriginalTaskID: -42, TweetID: s, TweetURL: "https://x.com/a/status/" + s, TweetAuthor: s,
			TweetText: s, ReplyIndex: 7, ReplyAuthor: s, ReplyText: s, IdempotencyKey: ReplyKey(-42, s, 7)}
		checkAppendJSON(t, task)
	}
	checkAppendJSON(t, ReplyTask{})
}

func checkAppendJSON(t *testing.T, task ReplyTask) {
	t.Helper()
	want, wantErr := json.Marshal(task)
	got, err := task.AppendJSON([]byte("prefix"))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%+v: AppendJSON err %v, Marshal err %v", task, err, wantErr)
	}
	if wantErr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%+v:\n got %s\nwant prefix%s", task, got, want)
	}
}

func FuzzReplyTaskAppendJSON(f *testing.F) {
	f.Add(int64(1), "123", "u", "a", "t", 0, "ra", "rt")
	f.Add(int64(-9), "\xff", "<>", "\"", "\\", -3, "\u2028", "\x00")
	f.Fuzz(func(t *testing.T, task int64, id, url, author, text string, index int, replyAuthor, replyText string) {
		checkAppendJSON(t, ReplyTask{OriginalTaskID: task, TweetID: id, TweetURL: url, TweetAuthor: author, TweetText: text,
			ReplyIndex: index, ReplyAuthor: replyAuthor, ReplyText: replyText, IdempotencyKey: ReplyKey(task, id, index)})
	})
}
