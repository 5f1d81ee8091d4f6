package taskecho

import (
	"time"

	"github.com/taskloom/taskloom/internal/waiting"
)

// BlockedBy is what keeps a task that is not finished from being worked on (the blocked_by of
// the task views), from the task document alone: a client's lease until it expires, its
// expires_at passed, or no client has pulled it yet. nil for a finished task. A pull refused by
// the pull key's rate limit or daily quota blocks the key, not a task: that pull answers 429
// with Retry-After.
func BlockedBy(t *Task, now time.Time) *waiting.For {
	switch t.Status {
	case StatusRunning:
		by, since := "a client", t.UpdatedAt
		if t.PulledBy != nil {
			by = *t.PulledBy
		}
		if t.PulledAt != nil {
			since = *t.PulledAt
		}
		until := time.Time{}
		if t.LeaseExpiresAt != nil {
			until = *t.LeaseExpiresAt
		}
		return waiting.New(waiting.Leased, "leased by "+by, since, until)
	case StatusPending:
		since := t.CreatedAt
		if t.PendingSince != nil {
			since = *t.PendingSince
		}
		if t.ExpiresAt != nil && !t.ExpiresAt.After(now) {
			return waiting.New(waiting.Expired, "expired at "+t.ExpiresAt.UTC().Format(time.RFC3339)+"; no client gets it any more",
				*t.ExpiresAt, time.Time{})
		}
		detail := "pending; no client has pulled it yet"
		if len(t.PullHistory) > 0 {
			detail = "pending again after its last lease ended; waits for the next pull"
		}
		w := waiting.New(waiting.NotPulled, detail, since, time.Time{})
		if t.ExpiresAt != nil {
			w.Detail += "; expires at " + t.ExpiresAt.UTC().Format(time.RFC3339)
		}
		return w
	}
	return nil
}
