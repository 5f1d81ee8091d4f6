package bitable

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
)

func FuzzDecodeRow(f *testing.F) {
	for _, s := range []string{
		`{"BizType":"video_screen_capture","Status":"failed","TaskIDs":[{"type":"text","text":"12,13"}],"RetryCount":2,"StartAt":1765944000000,"Date":1765900800000}`,
		`{"TaskIDs":"x"}`, `{}`, `{"RetryCount":"3","Date":"not a date","GroupID":[{"type":"text","text":"kwai_B1_U1"}]}`,
	} {
		f.Add([]byte(s))
	}
	loc, _ := time.LoadLocation(feishu.DefaultTimeZone)
	names := webhook.DefaultFieldNames().Webhook
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
