package webhook

import (
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
