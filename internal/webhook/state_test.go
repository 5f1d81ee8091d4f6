package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAfterAttemptThreeFailuresThenError(t *testing.T) {
	t0 := time.Date(2025, 12, 17, 10, 0, 0, 0, time.UTC)
	retry, hadStart := 0, false
	var statuses []string
	for i := range 3 {
		a := Attempt{StartedAt: t0.Add(time.Duration(i) * time.Minute), EndedAt: t0.Add(time.Duration(i)*time.Minute + time.Second), Err: "HTTP 500"}
		tr := AfterAttempt(retry, hadStart, a)
		if (tr.StartAt != nil) != (i == 0) {
			t.Fatalf("attempt %d: StartAt written = %v, want only on the first", i, tr.StartAt != nil)
		}
		if !tr.EndAt.Equal(a.EndedAt) {
			t.Fatalf("attempt %d: EndAt %v", i, tr.EndAt)
		}
		statuses = append(statuses, tr.Status)
		retry, hadStart = tr.RetryCount, true
		if !strings.Contains(tr.LastError, "HTTP 500") {
			t.Fatalf("LastError %q", tr.LastError)
		}
	}
	if strings.Join(statuses, ",") != "failed,failed,error" || retry != 3 {
		t.Fatalf("statuses %v retry %d", statuses, retry)
	}
	ok := AfterAttempt(2, true, Attempt{StartedAt: t0, EndedAt: t0})
	if ok.Status != StatusSuccess || ok.RetryCount != 0 || ok.LastError != "" || ok.StartAt != nil {
		t.Fatalf("success transition %+v", ok)
	}
	f := ok.Fields(DefaultFieldNames().Webhook)
	if f["Status"] != "success" || f["EndAt"] != t0.UnixMilli() || f["StartAt"] != nil {
		t.Fatalf("fields %+v", f)
	}
	dl := DeadlineExceeded(1, false, t0, t0.Add(time.Hour), time.Hour, []string{"1=running", "2=missing"})
	if dl.Status != StatusError || dl.RetryCount != 1 || !strings.Contains(dl.LastError, "2=missing") || dl.StartAt == nil {
		t.Fatalf("deadline %+v", dl)
	}
}

func TestEvaluate(t *testing.T) {
	st := map[string]string{"1": "success", "2": "error", "3": "running", "4": "", "5": "failed", "6": "dispatched", "7": "pending"}
	if r := Evaluate([]string{"1", "2"}, st); !r.Ready {
		t.Fatalf("success+error should be ready: %+v", r)
	}
	r := Evaluate([]string{"1", "3", "4", "5", "6", "7", "8"}, st)
	want := "3=running,4=empty,5=failed,6=dispatched,7=pending,8=missing"
	if r.Ready || strings.Join(r.Waiting, ",") != want {
		t.Fatalf("waiting %v", r.Waiting)
	}
	if Evaluate(nil, st).Ready {
		t.Fatal("a row without TaskIDs is never ready")
	}
}

func TestNextTaskStatus(t *testing.T) {
	cases := []struct {
		cur        Task
		next, want string
		retry      int
	}{
		{Task{Status: "failed", RetryCount: 0}, "running", "running", 1},
		{Task{Status: "running", RetryCount: 1}, "running", "running", 1},
		{Task{Status: "running", RetryCount: 3}, "failed", "failed", 3},
		{Task{Status: "running", RetryCount: 4}, "failed", "error", 4},
		{Task{Status: "failed", RetryCount: 3}, "running", "running", 4},
		{Task{Status: "pending"}, "success", "success", 0},
	}
	for _, c := range cases {
		u, err := NextTaskStatus(c.cur, c.next)
		if err != nil || u.Status != c.want || u.RetryCount != c.retry {
			t.Errorf("%+v → %s: %+v %v, want %s/%d", c.cur, c.next, u, err, c.want, c.retry)
		}
	}
	if _, err := NextTaskStatus(Task{}, "done"); err == nil {
		t.Fatal("unknown status accepted")
	}
}

func TestPushPlainAndBotMode(t *testing.T) {
	var got []map[string]any
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		got = append(got, m)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"code":0,"msg":"success"}`))
	}))
	defer srv.Close()
	p := &Payload{BizType: BizVideoScreenCapture, RecordID: "rec1", TaskIDs: []string{"1"}, Drama: map[string]any{}, Records: []map[string]any{{"a": "b"}}}
	if err := (&Pusher{URL: srv.URL}).Push(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if got[0]["biz_type"] != BizVideoScreenCapture || got[0]["record_id"] != "rec1" {
		t.Fatalf("plain body %+v", got[0])
	}
	now := time.Unix(1765944000, 0)
	if err := (&Pusher{URL: srv.URL, Secret: "s3cret", Now: func() time.Time { return now }}).Push(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	bot := got[1]
	if bot["msg_type"] != "text" || bot["timestamp"] != "1765944000" || bot["sign"] != BotSign(1765944000, "s3cret") {
		t.Fatalf("bot body %+v", bot)
	}
	status = http.StatusBadGateway
	if err := (&Pusher{URL: srv.URL}).Push(t.Context(), p); err == nil || !strings.Contains(err.Error(), "HTTP 502") {
		t.Fatalf("502 push: %v", err)
	}
}

func TestBotSignKnownValue(t *testing.T) {
	// key = "1600000000\nsecret", message empty, HMAC-SHA256, base64.
	// Expected value computed independently: printf '' | openssl dgst -sha256 -hmac $'1600000000\nsecret' -binary | base64
	if got := BotSign(1600000000, "secret"); got != "vvU1S4ucHy95pQ90meMW66yQJ+Szge4s9g7hQUu9yP8=" {
		t.Fatalf("sign = %s", got)
	}
}
