package taskecho

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// newLeaseID returns a random fencing token; one pull call hands the same token to all the tasks
// it claims, so a client can confirm or release its whole batch with it.
func newLeaseID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "ls_" + hex.EncodeToString(b[:])
}

// openEntryIndex is the index of the pull_history entry of the task's current lease, or -1.
func openEntryIndex(t *Task) int {
	if t.LeaseID == nil || len(t.PullHistory) == 0 {
		return -1
	}
	n := len(t.PullHistory) - 1
	e := t.PullHistory[n]
	if e.LeaseID != *t.LeaseID || e.ReleasedAt != nil {
		return -1
	}
	return n
}

// closedHistory returns the task's history with its open entry ended at now by `by` for reason.
// success marks a push or confirm (pushed_at).
func closedHistory(t *Task, now time.Time, by, reason string, success bool) []PullEntry {
	h := append([]PullEntry{}, t.PullHistory...)
	if n := openEntryIndex(t); n >= 0 {
		e := h[n]
		e.ReleasedAt, e.ReleasedBy, e.Reason = &now, &by, &reason
		if success {
			e.PushedAt = &now
		}
		h[n] = e
	}
	return h
}

// closeLeaseSet is the $set that ends the task's lease. keepPullMarks keeps pulled_at/pulled_by
// (a push turns the task into a client task that remembers its pull, as TaskEcho did); every
// other ending makes a server task pullable again.
func closeLeaseSet(t *Task, now time.Time, by, reason string, success, keepPullMarks bool) Fields {
	set := Fields{
		"lease_id":         nil,
		"lease_expires_at": nil,
		"pull_history":     closedHistory(t, now, by, reason, success),
	}
	if !keepPullMarks {
		set["pulled_at"] = nil
		set["pulled_by"] = nil
	}
	return set
}

// observeClose records the metrics of one ended lease.
func (c *core) observeClose(t *Task, now time.Time, reason string, success bool) {
	if t.LeaseID == nil {
		return
	}
	c.metrics.LeaseClosed(closeOutcome(reason, success))
	if success && t.PulledAt != nil {
		c.metrics.PullToPush(now.Sub(*t.PulledAt))
	}
}
