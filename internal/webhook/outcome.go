package webhook

import "slices"

// SweepOutcome is the signal a sweep sends to the claimed delivery workflow of a row it
// delivered in its batch, telling it what the sweep did with the row:
//   - Transition set: the sweep pushed (or failed to) and Written says whether the write-back
//     is already on the row; the workflow writes it itself when not.
//   - Done: the row had moved on (success/error, or it is gone) when re-read; nothing pushed.
//   - otherwise Row is the row as re-read (its TaskIDs changed, or the sweep could not finish):
//     the workflow goes on with its own readiness loop from that row.
type SweepOutcome struct {
	Transition *Transition `json:"transition,omitempty"`
	Written    bool        `json:"written,omitempty"`
	Done       bool        `json:"done,omitempty"`
	Row        *Row        `json:"row,omitempty"`
}

// Deliverable reports whether a row as re-read still wants a push: Status pending or failed.
func Deliverable(r Row) bool { return r.Status == StatusPending || r.Status == StatusFailed }

// SameWork reports whether fresh asks for the same push as the snapshot the readiness verdict
// was made on: same TaskIDs, still deliverable.
func SameWork(snapshot, fresh Row) bool {
	return Deliverable(fresh) && fresh.BadTaskIDs == "" && slices.Equal(snapshot.TaskIDs, fresh.TaskIDs)
}

// StatusAttributeChanges reports whether a delivery whose TaskloomStatus search attribute shows
// shown must set it to status. The attribute answers the operators' questions (which rows
// failed, which ended in error), so it moves when a row becomes or stops being failed/error;
// a row delivered in one push keeps the pending it was started with (its execution is
// Completed, its result and the row say success).
func StatusAttributeChanges(shown, status string) bool {
	needsOperator := func(s string) bool { return s == StatusFailed || s == StatusError }
	return shown != status && (needsOperator(shown) || needsOperator(status))
}
