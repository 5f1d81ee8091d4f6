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
