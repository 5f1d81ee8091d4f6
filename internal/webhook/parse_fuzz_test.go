package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/feishu"
)

func TestParseTaskIDs(t *testing.T) {
	ids, err := ParseTaskIDs(" 123,456，123\n789 ")
	if err != nil || strings.Join(ids, "|") != "123|456|789" {
		t.Fatalf("%v %v", ids, err)
	}
	if _, err := ParseTaskIDs("12,abc"); err == nil {
		t.Fatal("non-numeric id accepted")
	}
	if got := MergeTaskIDs([]string{"100", "9"}, []string{"20", "9"}); strings.Join(got, ",") != "9,20,100" {
		t.Fatalf("merge %v", got)
	}
}

func FuzzParseTaskIDs(f *testing.F) {
	for _, s := range []string{"123,456", "1", "", " 1 ，2;3\n", "a,1", "99999999999999999999", ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := ParseTaskIDs(s)
		if err != nil {
			return
		}
		again, err := ParseTaskIDs(FormatTaskIDs(ids))
		if err != nil || strings.Join(again, ",") != strings.Join(ids, ",") {
			t.Fatalf("round trip %q → %v → %v %v", s, ids, again, err)
		}
	})
}

func FuzzDecodeRow(f *testing.F) {
	for _, s := range []string{
		`{"BizType":"video_screen_capture","Status":"failed","TaskIDs":[{"type":"text","text":"12,13"}],"RetryCount":2,"StartAt":1765944000000,"Date":1765900800000}`,
		`{"TaskIDs":"x"}`, `{}`, `{"RetryCount":"3","Date":"not a date","GroupID":[{"type":"text","text":"kwai_B1_U1"}]}`,
	} {
		f.Add([]byte(s))
	}
	loc, _ := time.LoadLocation(feishu.DefaultTimeZone)
	names := DefaultFieldNames().Webhook
	f.Fuzz(func(t *testing.T, data []byte) {
		var fields map[string]any
		if json.Unmarshal(data, &fields) != nil {
			return
		}
		r := DecodeRow(feishu.Record{ID: "rec1", Fields: fields}, names, loc)
		if r.Status == "" || r.RetryCount < 0 {
			t.Fatalf("decoded %+v", r)
		}
		if r.BadTaskIDs == "" {
			for _, id := range r.TaskIDs {
				if id == "" || strings.Trim(id, "0123456789") != "" {
					t.Fatalf("bad id %q accepted", id)
				}
			}
		}
		if r.Date != "" {
			if _, err := time.Parse(feishu.DayLayout, r.Date); err != nil {
				t.Fatalf("date %q", r.Date)
			}
		}
	})
}
