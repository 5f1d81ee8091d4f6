package webhook

import "time"

// The contract between the webhook workflows (workflows/webhook) and their activities
// (activities/webhook): the types both sides exchange. It lives here, below both, because
// imports go one way only (api, worker, starter → workflows → activities → internal): the
// activities never import the workflow package, and the workflows reach no Feishu or HTTP
// client. The workflows call the activities by method value.

// DeliveryKind is the TaskloomKind of a delivery workflow.
const DeliveryKind = "webhook-delivery"

// ClaimHold is how long a claimed delivery waits for its sweep's outcome: the claim's
// WorkflowRunTimeout (runs claimed before that waited with a timer of this length and then went
// on by themselves). Longer than the sweep activity's StartToCloseTimeout, so a live sweep always
// answers first; a run whose sweep was lost times out, and the next sweep finds the row as the
// lost one left it.
const ClaimHold = 15 * time.Minute

// URLs names the four Bitable tables by link. Drama and Capture are optional.
type URLs struct {
	Task    string `json:"task_url"`
	Webhook string `json:"webhook_url"`
	Drama   string `json:"drama_url,omitempty"`
	Capture string `json:"capture_url,omitempty"`
}

// RowFilter narrows the candidate scan (the CLI's --group-id / --date).
type RowFilter struct {
	GroupID string `json:"group_id,omitempty"`
	Date    string `json:"date,omitempty"` // YYYY-MM-DD
}

// Target is where a workflow reads and pushes: the tables and the summary receiver.
type Target struct {
	URLs       URLs   `json:"urls"`
	SummaryURL string `json:"summary_url"`
}

// Policy shapes the delivery loop (WEBHOOK_READINESS_*, WEBHOOK_RETRY_BACKOFF).
type Policy struct {
	ReadinessBackoff    time.Duration `json:"readiness_backoff"`
	ReadinessBackoffMax time.Duration `json:"readiness_backoff_max"`
	ReadinessDeadline   time.Duration `json:"readiness_deadline"`
	RetryBackoff        time.Duration `json:"retry_backoff"`
}

// DeliveryInput starts (or continues) WebhookDeliveryWorkflow for one row.
type DeliveryInput struct {
	Target Target `json:"target"`
	Row    Row    `json:"row"`
	Policy Policy `json:"policy"`
	// Since is when the row was first seen waiting (carried over continue-as-new) and the
	// start of the readiness deadline.
	Since time.Time `json:"since"`
	// Wait is the current readiness backoff (carried over continue-as-new).
	Wait time.Duration `json:"wait"`
	// Claimed: a sweep found the row ready and started this workflow to hold the row while the
	// sweep pushes it in its batch; the workflow waits for the sweep's outcome signal
	// (a SweepOutcome) for at most ClaimHold, and goes on by itself only when the outcome
	// leaves the row to it.
	Claimed bool `json:"claimed,omitempty"`
	// RetryAfter: the previous run's push failed; this run waits this long before it pushes
	// again (a claimed run that continues as new on its own after its sweep's failed push).
	RetryAfter time.Duration `json:"retry_after,omitempty"`
}

// AttemptInput asks the attempt activity to check readiness and, when ready, push.
type AttemptInput struct {
	Target Target `json:"target"`
	Row    Row    `json:"row"`
}

// AttemptResult: Ready=false means "wait" (Waiting says on what); otherwise Err is empty on a
// successful push and holds the failure otherwise.
type AttemptResult struct {
	Ready     bool      `json:"ready"`
	Waiting   []string  `json:"waiting,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Err       string    `json:"err,omitempty"`
	// Row is the row as re-read before the push (the push decides from it); nil in results
	// recorded before the re-read existed.
	Row *Row `json:"row,omitempty"`
	// Done: the re-read row had moved on (success/error or gone); nothing was pushed.
	Done bool `json:"done,omitempty"`
}

// WriteBackInput applies a transition to a row.
type WriteBackInput struct {
	URLs       URLs       `json:"urls"`
	RecordID   string     `json:"record_id"`
	Transition Transition `json:"transition"`
}

// SweepInput drives one WebhookResultWorker scan.
type SweepInput struct {
	Target Target    `json:"target"`
	Filter RowFilter `json:"filter"`
	Policy Policy    `json:"policy"`
}

// SweepResult counts what a scan did.
type SweepResult struct {
	Candidates int `json:"candidates"`
	Ensured    int `json:"ensured"`   // delivery workflows started or found running
	Delivered  int `json:"delivered"` // ready rows pushed by the sweep's own batch
	Escalated  int `json:"escalated_tasks"`
}

// CreatorInput drives one WebhookResultCreator run for an app.
type CreatorInput struct {
	URLs                   URLs   `json:"urls"`
	App                    string `json:"app"`
	EnableSingleURLCapture bool   `json:"enable_single_url_capture"`
	ScanDate               string `json:"scan_date,omitempty"`
}

// CreateResult reports what a creator run did.
type CreateResult struct {
	Scanned int `json:"scanned"`
	Created int `json:"created"`
	Updated int `json:"updated"`
	Skipped int `json:"skipped"`
}

// GroupsInput names the finished 综合页搜索 parent task.
type GroupsInput struct {
	URLs         URLs   `json:"urls"`
	ParentTaskID string `json:"parent_task_id"`
}

// DeliveryID is the workflow ID of a row: webhook-{table}-{record_id}.
func DeliveryID(tableID, recordID string) string { return "webhook-" + tableID + "-" + recordID }

// RecoverInput is a WebhookRecoverWorkflow: re-deliver the result rows that ended failed or
// error with EndAt in [Since, Until) (docs/operations.md "Redrive").
type RecoverInput struct {
	Target Target    `json:"target"`
	Policy Policy    `json:"policy"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
}

// MaxRecoverOutcomes caps the per-row outcomes a recover result lists.
const MaxRecoverOutcomes = 1000

// Outcomes of one row in a recover run.
const (
	RecoverReset   = "reset"   // written back to pending and its delivery workflow ensured
	RecoverSkipped = "skipped" // it moved on since the search (delivered, deleted or out of range)
)

// RecoverOutcome is what a recover run did with one row.
type RecoverOutcome struct {
	RecordID string `json:"record_id"`
	Outcome  string `json:"outcome"`
	Status   string `json:"status"` // the row's status when the run read it
}

// RecoverResult counts what a recover run did; Rows lists the first MaxRecoverOutcomes rows.
type RecoverResult struct {
	Matched int              `json:"matched"`
	Reset   int              `json:"reset"`
	Skipped int              `json:"skipped"`
	Rows    []RecoverOutcome `json:"rows,omitempty"`
}

// Recoverable reports whether r ended failed or error with EndAt in [since, until).
func Recoverable(r Row, since, until time.Time) bool {
	if r.Status != StatusFailed && r.Status != StatusError {
		return false
	}
	return r.EndAt >= since.UnixMilli() && r.EndAt < until.UnixMilli()
}
