// Package webhook holds the side effects of the webhook result table workflows: Feishu reads
// and writes, the push to the summary receiver, and starting delivery workflows from the sweep.
// It reaches them through the small interfaces below, which the worker fills with
// internal/webhook/bitable, internal/webhook/summary and workflows/webhook's DeliveryClient: the
// workflows reference these methods by value, so this package must link no Feishu SDK, no
// net/http and no workflow package.
package webhook

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/webhook"
)

// Tables is the activities' view of the Feishu tables of one target (bitable.Tables).
type Tables interface {
	// One row's delivery.
	Tasks(ctx context.Context, ids []string) (map[string]webhook.Task, error)
	GetRow(ctx context.Context, recordID string) (webhook.Row, error)
	BuildPayload(ctx context.Context, row webhook.Row, tasks map[string]webhook.Task) (*webhook.Payload, error)
	WriteBack(ctx context.Context, recordID string, tr webhook.Transition) error

	// The sweep's batches.
	WebhookTableID() string
	CandidateRows(ctx context.Context, rf webhook.RowFilter) ([]webhook.Row, error)
	TasksForRows(ctx context.Context, rows []webhook.Row) (map[string]webhook.Task, error)
	GetRows(ctx context.Context, ids []string) (map[string]webhook.Row, error)
	BuildPayloads(ctx context.Context, rows []webhook.Row, tasks map[string]webhook.Task) (map[string]*webhook.Payload, map[string]error, error)
	WriteBacks(ctx context.Context, trs map[string]webhook.Transition) error
	EscalateFailedTasks(ctx context.Context) (int, error)

	// The recover run.
	RecoverRows(ctx context.Context, since, until time.Time) ([]webhook.Row, error)
	ResetRow(ctx context.Context, recordID string) error

	// The creators.
	CreateVideoRows(ctx context.Context, app string, now time.Time) (webhook.CreateResult, error)
	CreateSingleURLRows(ctx context.Context, scanDate string, now time.Time) (webhook.CreateResult, error)
	CreateWebhookResultsForGroups(ctx context.Context, parentTaskID string, now time.Time) (webhook.CreateResult, error)
}

// Pusher posts a payload to the summary receiver at url (summary.Pusher).
type Pusher interface {
	Push(ctx context.Context, url string, p *webhook.Payload) error
}

// Deliveries starts and signals the delivery workflows of result rows (workflows/webhook's
// DeliveryClient). A row's workflow is named by the webhook table's ID and the row's record_id.
type Deliveries interface {
	// Ensure starts in.Row's delivery workflow on taskQueue unless one runs already.
	Ensure(ctx context.Context, taskQueue, tableID string, in webhook.DeliveryInput) error
	// Claim starts in.Row's delivery workflow in claimed mode and returns its run ID; ok is false
	// when a delivery of the row is running already (it owns the row).
	Claim(ctx context.Context, taskQueue, tableID string, in webhook.DeliveryInput) (runID string, ok bool, err error)
	// ReportOutcome signals the claimed run runID of a row's delivery what the sweep did with it.
	ReportOutcome(ctx context.Context, tableID, recordID, runID string, o webhook.SweepOutcome) error
}

// ErrNotConfigured is the non-retryable failure type when no Feishu app is configured.
const ErrNotConfigured = "FeishuNotConfigured"

// Activities are the webhook activities. Every exported method is an activity, registered under
// its own name by workflows/webhook.Register; helpers stay unexported.
type Activities struct {
	// OpenTables resolves a target's tables (bitable.Open on the worker's Feishu client). Nil
	// when FEISHU_APP_ID is unset and no emulator runs: every activity then fails as
	// FeishuNotConfigured.
	OpenTables func(ctx context.Context, u webhook.URLs) (Tables, error)
	Pusher     Pusher
	Deliveries Deliveries
	Log        *slog.Logger
}

func (a *Activities) tables(ctx context.Context, u webhook.URLs) (Tables, error) {
	if a.OpenTables == nil {
		return nil, temporal.NewNonRetryableApplicationError("Feishu is not configured: set FEISHU_APP_ID and FEISHU_APP_SECRET (or run the dev stack's emulator)", ErrNotConfigured, nil)
	}
	t, err := a.OpenTables(ctx, u)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "BadTableURL", err)
	}
	return t, nil
}

// attemptHeartbeatEvery is well inside the attempt's HeartbeatTimeout (workflows/webhook).
const attemptHeartbeatEvery = 5 * time.Second

// keepAlive calls beat (the activity heartbeat) every interval until the returned stop is called.
// The heartbeat says "this worker is alive", not "this step made progress": a worker that dies in
// the middle of an attempt is noticed after the short HeartbeatTimeout instead of the whole
// StartToCloseTimeout, while a slow but live Feishu call (rate-limit backoff) is never cut short.
func keepAlive(ctx context.Context, every time.Duration, beat func()) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	return func() { close(done); <-exited }
}

// logger carries the keys every webhook log line has: biz_type, group_id, task_ids,
// webhook_status (and the row's record_id).
func (a *Activities) logger(row webhook.Row, status string) *slog.Logger {
	return a.Log.With("biz_type", row.BizType, "group_id", row.GroupID, "task_ids", webhook.FormatTaskIDs(row.TaskIDs),
		"webhook_status", status, "record_id", row.RecordID)
}

// WebhookAttempt checks a row's readiness with one batched task lookup and, when every task is
// finished, re-reads the row and decides from it as it is now: a row that has moved on
// (delivered or closed by someone else) is not pushed (Done); a row whose TaskIDs changed is
// checked again on its new TaskIDs. Then it builds the payload and pushes it. A push failure is
// returned in the result (it counts towards the row's RetryCount) rather than as an activity
// error, so Temporal never re-pushes behind the state machine's back; Feishu read errors are
// activity errors and are retried before anything is pushed. The re-read is what makes a
// retried or duplicated attempt idempotent: only the workflow holding webhook-{table}-{record}
// pushes, and it writes back before it ends.
func (a *Activities) WebhookAttempt(ctx context.Context, in webhook.AttemptInput) (webhook.AttemptResult, error) {
	defer keepAlive(ctx, attemptHeartbeatEvery, func() { activity.RecordHeartbeat(ctx) })()
	t, err := a.tables(ctx, in.Target.URLs)
	if err != nil {
		return webhook.AttemptResult{}, err
	}
	row := in.Row
	if row.BadTaskIDs != "" {
		return webhook.AttemptResult{Waiting: []string{row.BadTaskIDs}}, nil
	}
	tasks, r, err := a.readiness(ctx, t, row)
	if err != nil || !r.Ready {
		return webhook.AttemptResult{Waiting: r.Waiting}, err
	}
	fresh, err := t.GetRow(ctx, row.RecordID)
	if err != nil {
		return webhook.AttemptResult{}, err
	}
	if !webhook.Deliverable(fresh) {
		a.logger(fresh, fresh.Status).Info("webhook row moved on before its push; not pushed")
		return webhook.AttemptResult{Done: true, Row: &fresh}, nil
	}
	if !webhook.SameWork(row, fresh) {
		if fresh.BadTaskIDs != "" {
			return webhook.AttemptResult{Waiting: []string{fresh.BadTaskIDs}, Row: &fresh}, nil
		}
		if tasks, r, err = a.readiness(ctx, t, fresh); err != nil || !r.Ready {
			return webhook.AttemptResult{Waiting: r.Waiting, Row: &fresh}, err
		}
	}
	p, err := t.BuildPayload(ctx, fresh, tasks)
	var pe *webhook.PayloadError
	if err != nil && !errors.As(err, &pe) {
		return webhook.AttemptResult{}, err // a Feishu read failed: retried before anything is pushed
	}
	res := a.push(ctx, in.Target, fresh, p, err)
	res.Row = &fresh
	return res, nil
}

// readiness looks the row's tasks up and evaluates them.
func (a *Activities) readiness(ctx context.Context, t Tables, row webhook.Row) (map[string]webhook.Task, webhook.Readiness, error) {
	tasks, err := t.Tasks(ctx, row.TaskIDs)
	if err != nil {
		return nil, webhook.Readiness{}, err
	}
	r := webhook.Evaluate(row.TaskIDs, webhook.Statuses(tasks))
	if !r.Ready {
		a.logger(row, row.Status).Debug("webhook row waiting", "waiting", r.Waiting)
	}
	return tasks, r, nil
}

// push posts a row's payload, or records why it could not be built (buildErr, a
// *webhook.PayloadError), as one attempt.
func (a *Activities) push(ctx context.Context, target webhook.Target, row webhook.Row, p *webhook.Payload, buildErr error) webhook.AttemptResult {
	res := webhook.AttemptResult{Ready: true, StartedAt: time.Now()}
	if buildErr != nil {
		res.Err = "build payload: " + buildErr.Error()
	} else {
		res.Err = a.send(ctx, target, p)
	}
	res.EndedAt = time.Now()
	a.logPush(row, p, res.Err)
	return res
}

// send posts p to the summary receiver; the error text, or "" on success.
func (a *Activities) send(ctx context.Context, target webhook.Target, p *webhook.Payload) string {
	if err := a.Pusher.Push(ctx, target.SummaryURL, p); err != nil {
		return err.Error()
	}
	return ""
}

func (a *Activities) logPush(row webhook.Row, p *webhook.Payload, errText string) {
	outcome := webhook.StatusSuccess
	if errText != "" {
		outcome = webhook.StatusFailed
	}
	a.logger(row, outcome).Info("webhook push attempted", "records", recordsOf(p), "err", errText)
}

func recordsOf(p *webhook.Payload) int {
	if p == nil {
		return 0
	}
	return len(p.Records)
}

// WebhookWriteBack writes a transition to the row. It is idempotent: the same fields written twice
// leave the row as after one write.
func (a *Activities) WebhookWriteBack(ctx context.Context, in webhook.WriteBackInput) error {
	t, err := a.tables(ctx, in.URLs)
	if err != nil {
		return err
	}
	return t.WriteBack(ctx, in.RecordID, in.Transition)
}

// WebhookEscalateFailedTasks applies the task table's rule that a failed task past 3 retries is
// error. Idempotent: already-escalated tasks no longer match the search.
func (a *Activities) WebhookEscalateFailedTasks(ctx context.Context, u webhook.URLs) (int, error) {
	t, err := a.tables(ctx, u)
	if err != nil {
		return 0, err
	}
	return t.EscalateFailedTasks(ctx)
}

// WebhookCreateVideoRows runs the video_screen_capture creator (idempotent: rows are looked up by
// TaskID before creating).
func (a *Activities) WebhookCreateVideoRows(ctx context.Context, in webhook.CreatorInput) (webhook.CreateResult, error) {
	t, err := a.tables(ctx, in.URLs)
	if err != nil {
		return webhook.CreateResult{}, err
	}
	res, err := t.CreateVideoRows(ctx, in.App, time.Now())
	a.Log.Info("webhook creator run", "biz_type", webhook.BizVideoScreenCapture, "app", in.App, "created", res.Created, "skipped", res.Skipped, "err", err)
	return res, err
}

// WebhookCreateSingleURLRows runs the single_url_capture aggregation (idempotent per GroupID+Date).
// InvalidFilter is not retryable: the table needs the missing option first.
func (a *Activities) WebhookCreateSingleURLRows(ctx context.Context, in webhook.CreatorInput) (webhook.CreateResult, error) {
	t, err := a.tables(ctx, in.URLs)
	if err != nil {
		return webhook.CreateResult{}, err
	}
	res, err := t.CreateSingleURLRows(ctx, in.ScanDate, time.Now())
	a.Log.Info("webhook creator run", "biz_type", webhook.BizSingleURLCapture, "app", in.App, "created", res.Created, "updated", res.Updated, "err", err)
	return res, nonRetryableFilter(err)
}

// WebhookCreateGroupRows runs CreateWebhookResultsForGroups (idempotent: BizType+GroupID+Date dedupe).
func (a *Activities) WebhookCreateGroupRows(ctx context.Context, in webhook.GroupsInput) (webhook.CreateResult, error) {
	t, err := a.tables(ctx, in.URLs)
	if err != nil {
		return webhook.CreateResult{}, err
	}
	res, err := t.CreateWebhookResultsForGroups(ctx, in.ParentTaskID, time.Now())
	a.Log.Info("webhook group rows", "biz_type", webhook.BizPiracyGeneralSearch, "parent_task_id", in.ParentTaskID, "created", res.Created, "skipped", res.Skipped, "err", err)
	var pe *webhook.PayloadError
	if errors.As(err, &pe) {
		return res, temporal.NewNonRetryableApplicationError(pe.Reason, "ParentTaskNotFound", err)
	}
	return res, nonRetryableFilter(err)
}

// InvalidFilterType is the application error type of Feishu's 1254018 answer.
const InvalidFilterType = "InvalidFilter"

// nonRetryableFilter makes an InvalidFilter answer non-retryable: the table needs the missing
// option first. The answer is recognised by behaviour (feishu.APIError's InvalidFilter
// method), since this package does not link the Feishu client.
func nonRetryableFilter(err error) error {
	var f interface{ InvalidFilter() bool }
	if errors.As(err, &f) && f.InvalidFilter() {
		return temporal.NewNonRetryableApplicationError(err.Error(), InvalidFilterType, err)
	}
	return err
}
