// Package waiting is the one list of reasons a unit of work that has not finished can be waiting
// for, and the waiting_for object every API and console page answers for such a unit
// (docs/operations.md "What each execution shows"). A reason names what has to happen next; Detail says it in a
// sentence with the unit's own names and numbers; Until is when the wait ends by itself (a timer,
// a lease, a deadline), absent when only someone else can end it (a callback, an operator).
package waiting

import (
	"fmt"
	"time"
)

// The reasons, by subsystem. The waiting_for table of docs/operations.md lists the same, with what ends each.
const (
	// Pipeline steps.

	// Callback: an scf step's function was invoked and the step waits for its signed callback.
	Callback = "callback"
	// Poll: an async_api step's vendor job was submitted; the next status poll is at Until.
	Poll = "poll"
	// Call: a sync_api step (or a submit, an invocation) is being sent to the provider.
	Call = "call"
	// ProviderCoolingDown: every candidate provider of the step is cooling down after repeated
	// failures (the circuit breaker); the step goes on when one is usable again.
	ProviderCoolingDown = "provider_cooling_down"
	// RetryBackoff: the last attempt failed and the next one starts at Until.
	RetryBackoff = "retry_backoff"

	// Entry tasks (RetryBackoff too, for the retry at Until).

	// Pipeline: the entry task's pipeline run (a child workflow) is running.
	Pipeline = "pipeline"
	// Operator: the task is suspended and waits for an operator's resume or drop.
	Operator = "operator"
	// AutoDrop: a suspended task is dropped at Until unless an operator resumes it first.
	AutoDrop = "auto_drop"

	// Echo server tasks (blocked_by). The pull key's rate limit and daily quota block a key, not
	// a task: the refused pull answers 429 with Retry-After.

	// Leased: a client holds the task's lease until Until.
	Leased = "leased"
	// Expired: the task passed its expires_at and is no longer handed out.
	Expired = "expired"
	// NotPulled: the task is pending and no client has pulled it yet.
	NotPulled = "not_pulled"

	// Webhook rows.

	// TasksNotFinal: some of the row's TaskIDs are not success or error yet; the next check is
	// at Until.
	TasksNotFinal = "tasks_not_final"
	// PushRetry: the push failed and is tried again at Until.
	PushRetry = "push_retry"
	// SweepBatch: a sweep claimed the row and pushes it in its batch; the row's own workflow
	// goes on alone at Until if the sweep never reports.
	SweepBatch = "sweep_batch"

	// Crawl tasks.

	// Crawler: the crawler process is running.
	Crawler = "crawler"
	// TweetsMissing: processed tweets are fewer than total_tweets; the task fails at Until (the
	// completion deadline).
	TweetsMissing = "tweets_missing"
)

// Reasons lists every reason, in that table's order.
var Reasons = []string{Callback, Poll, Call, ProviderCoolingDown, RetryBackoff,
	Pipeline, Operator, AutoDrop,
	Leased, Expired, NotPulled,
	TasksNotFinal, PushRetry, SweepBatch,
	Crawler, TweetsMissing}

// For is what a unit that has not finished waits for: the waiting_for object of the API.
type For struct {
	Reason string     `json:"reason" bson:"reason"`
	Detail string     `json:"detail" bson:"detail"`
	Since  time.Time  `json:"since" bson:"since"`
	Until  *time.Time `json:"until,omitempty" bson:"until,omitempty"`
}

// New is a wait for reason since since, ending by itself at until (zero: only someone else
// ends it).
func New(reason, detail string, since, until time.Time) *For {
	f := &For{Reason: reason, Detail: detail, Since: since.UTC()}
	if !until.IsZero() {
		u := until.UTC()
		f.Until = &u
	}
	return f
}

// Sentence is the wait as one line for an operator (Temporal's current details, the console):
// the detail, since when, and until when.
func (f *For) Sentence() string {
	if f == nil {
		return ""
	}
	s := f.Detail
	if !f.Since.IsZero() {
		s += fmt.Sprintf(" since %s", clock(f.Since))
	}
	if f.Until != nil {
		s += fmt.Sprintf(", until %s", clock(*f.Until))
	}
	return s
}

// clock is a time of day in UTC: waits are minutes to hours long, so the day adds nothing but
// width (the API's since and until carry the full time).
func clock(t time.Time) string { return t.UTC().Format("15:04:05") + " UTC" }
