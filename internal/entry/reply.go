package entry

import "time"

// Reply statuses: what became of a Telegram task's reply.
const (
	// ReplySending: some of the reply's messages went out; the rest are being sent.
	ReplySending = "sending"
	// ReplySent: every message of the reply went out, in order.
	ReplySent = "sent"
	// ReplyFailed: Telegram refused the reply for good (403 bot blocked by the user, 400 chat not
	// found, …) or it could not be sent before its retries ran out. Messages already sent stay.
	ReplyFailed = "failed"
)

// Reply is a Telegram task's reply as workflow_runs records it and the task status shows it.
type Reply struct {
	Status string `json:"status" bson:"status"`
	// Parts is how many messages the reply is split into (Telegram's limit is MaxMessageUTF16
	// each); Sent how many of them Telegram accepted, in order; MessageIDs their ids.
	Parts      int     `json:"parts,omitempty" bson:"parts,omitempty"`
	Sent       int     `json:"sent" bson:"sent"`
	MessageIDs []int64 `json:"messageIds,omitempty" bson:"message_ids,omitempty"`
	// Error is why a failed reply did not go out (Telegram's description when it refused).
	Error string `json:"error,omitempty" bson:"error,omitempty"`
	// At is when the last part went out, or when the reply was given up.
	At time.Time `json:"at,omitzero" bson:"at,omitempty"`
}

// Done reports whether every part of the reply went out.
func (r *Reply) Done() bool { return r != nil && r.Status == ReplySent }

// WithPart is r after part r.Sent went out as message id at at: the next part is due, or the
// reply is sent when it was the last.
func (r Reply) WithPart(id int64, at time.Time) Reply {
	r.MessageIDs = append(append([]int64(nil), r.MessageIDs...), id)
	r.Sent++
	r.At = at
	r.Status = ReplySending
	if r.Sent >= r.Parts {
		r.Status = ReplySent
	}
	return r
}

// ReplyFailure records a reply given up: the workflow writes it once the reply activity failed
// for good.
type ReplyFailure struct {
	TaskID string
	Error  string
	At     time.Time
}
