package entry

import (
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/waiting"
)

func TestWaitingForFollowsTheStatus(t *testing.T) {
	since := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	next := since.Add(30 * time.Second)
	st := &TaskStatus{TaskID: "entry-1", Status: StatusRetrying, Attempts: 2, LastError: "vendor down",
		Retry: Retry{Count: 1, Max: 3, NextAttemptAt: next}}
	if w := WaitingFor(st, since); w.Reason != waiting.RetryBackoff || w.Until == nil || !w.Until.Equal(next) {
		t.Fatalf("retrying: %+v", w)
	}
	st.Status, st.SuspendedReason = StatusSuspended, "retries exhausted"
	w := WaitingFor(st, since)
	if w.Reason != waiting.Operator || w.Until != nil || !strings.Contains(w.Detail, "suspended after 2 attempts: retries exhausted") ||
		!strings.Contains(w.Detail, "POST /internal/tasks/entry-1/resume") {
		t.Fatalf("suspended: %+v", w)
	}
	dropAt := since.Add(24 * time.Hour)
	st.AutoDropAt = &dropAt
	if w := WaitingFor(st, since); w.Reason != waiting.AutoDrop || w.Until == nil || !w.Until.Equal(dropAt) ||
		!strings.Contains(w.Detail, "retries exhausted") {
		t.Fatalf("suspended with auto-drop: %+v", w)
	}
	st.Status = StatusCompleted
	if w := WaitingFor(st, since); w != nil {
		t.Fatalf("completed waits for %+v", w)
	}
}
