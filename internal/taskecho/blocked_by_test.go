package taskecho

import (
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/waiting"
)

func TestBlockedByFromTheTaskDocument(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	client, lease := "worker-1", now.Add(5*time.Minute)
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	cases := []struct {
		name   string
		task   Task
		reason string
	}{
		{"leased", Task{Status: StatusRunning, PulledBy: &client, PulledAt: &now, LeaseExpiresAt: &lease}, waiting.Leased},
		{"not pulled", Task{Status: StatusPending, ExpiresAt: &future}, waiting.NotPulled},
		{"expired", Task{Status: StatusPending, ExpiresAt: &past}, waiting.Expired},
		{"done", Task{Status: StatusDone}, ""},
	}
	for _, c := range cases {
		w := BlockedBy(&c.task, now)
		switch {
		case c.reason == "" && w != nil:
			t.Errorf("%s: blocked by %+v", c.name, w)
		case c.reason != "" && (w == nil || w.Reason != c.reason):
			t.Errorf("%s: blocked by %+v, want %s", c.name, w, c.reason)
		}
	}
	if w := BlockedBy(&cases[0].task, now); w.Detail != "leased by worker-1" || w.Until == nil || !w.Until.Equal(lease) {
		t.Errorf("lease: %+v", w)
	}
}
