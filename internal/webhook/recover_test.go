package webhook

import (
	"testing"
	"time"
)

// TestRecoverableKeepsExactBounds: failed and error rows with EndAt in [since, until) are
// recovered; pending/success rows, rows without EndAt and rows outside the bounds are not.
func TestRecoverableKeepsExactBounds(t *testing.T) {
	since := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	until := since.Add(time.Hour)
	at := func(d time.Duration) int64 { return since.Add(d).UnixMilli() }
	for _, c := range []struct {
		status string
		endAt  int64
		want   bool
	}{
		{StatusError, at(0), true},
		{StatusFailed, at(30 * time.Minute), true},
		{StatusError, at(-time.Millisecond), false},
		{StatusError, at(time.Hour), false},
		{StatusPending, at(time.Minute), false},
		{StatusSuccess, at(time.Minute), false},
		{StatusError, 0, false},
	} {
		if got := Recoverable(Row{Status: c.status, EndAt: c.endAt}, since, until); got != c.want {
			t.Errorf("Recoverable(%s, EndAt %d) = %v, want %v", c.status, c.endAt, got, c.want)
		}
	}
}
