package webhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/taskloom/taskloom/internal/webhook"
)

// Sizes of the sweep's batches: a chunk of claimed rows is re-read, pushed and written back
// before the next, so a crash loses at most one chunk's write-backs; pushes run pushConcurrency
// at a time, workflow starts and signals startConcurrency at a time.
const (
	sweepChunk       = 100
	pushConcurrency  = 8
	startConcurrency = 16 // Temporal starts and signals in flight
)

// WebhookSweepRows is one WebhookResultWorker scan. It finds the rows with Status pending or failed
// (error rows are skipped by the search) and checks all their tasks with one set of searches.
// A row still waiting gets its own delivery workflow (USE_EXISTING: one that runs already is
// kept), which waits with durable timers. A ready row is delivered by the sweep in a batch,
// exactly once whatever other sweeps do:
//
//  1. claim: start its webhook-{table}-{record} workflow in claimed mode; if one runs already,
//     that one owns the row and the sweep leaves it alone;
//  2. re-read the claimed rows (batch_get) and push only those still pending/failed with the
//     TaskIDs the readiness verdict was made on — a delivery that finished before the claim
//     wrote its status back before it ended, so a stale scan never pushes twice;
//  3. push, write back with batch_update, and signal each claimed workflow the outcome.
//
// Idempotent under retries: a row claimed by an earlier try is held by its workflow, so the
// retry cannot claim it again; that workflow goes on alone after webhook.ClaimHold.
func (a *Activities) WebhookSweepRows(ctx context.Context, in webhook.SweepInput) (webhook.SweepResult, error) {
	defer keepAlive(ctx, attemptHeartbeatEvery, func() { activity.RecordHeartbeat(ctx) })()
	t, err := a.tables(ctx, in.Target.URLs)
	if err != nil {
		return webhook.SweepResult{}, err
	}
	rows, err := t.CandidateRows(ctx, in.Filter)
	if err != nil {
		return webhook.SweepResult{}, nonRetryableFilter(err)
	}
	res := webhook.SweepResult{Candidates: len(rows)}
	tasks, err := t.TasksForRows(ctx, rows)
	if err != nil {
		return res, err
	}
	s := &sweep{a: a, t: t, in: in, queue: activity.GetInfo(ctx).TaskQueue, now: time.Now(), tasks: tasks, statuses: webhook.Statuses(tasks)}
	claimed, err := s.startAll(ctx, rows)
	res.Ensured = len(rows)
	if err != nil {
		s.release(ctx, claimed)
		return res, err
	}
	for start := 0; start < len(claimed); start += sweepChunk {
		n, err := s.deliver(ctx, claimed[start:min(start+sweepChunk, len(claimed))])
		res.Delivered += n
		if err != nil {
			s.release(ctx, claimed[start:])
			return res, err
		}
	}
	a.Log.Info("webhook sweep", "candidates", res.Candidates, "delivered", res.Delivered, "group_id", in.Filter.GroupID, "date", in.Filter.Date)
	return res, nil
}

type sweep struct {
	a        *Activities
	t        Tables
	in       webhook.SweepInput
	queue    string
	now      time.Time
	tasks    map[string]webhook.Task
	statuses map[string]string
}

// startAll gives every waiting row its delivery workflow and claims every ready one, startConcurrency
// starts at a time; it returns the claims in rows' order.
func (s *sweep) startAll(ctx context.Context, rows []webhook.Row) ([]claim, error) {
	claims := make([]*claim, len(rows))
	err := parallel(len(rows), startConcurrency, func(i int) error {
		row := rows[i]
		if row.BadTaskIDs != "" || !webhook.Evaluate(row.TaskIDs, s.statuses).Ready {
			return s.ensure(ctx, row)
		}
		c, ok, err := s.claim(ctx, row)
		if ok {
			claims[i] = &c
		}
		return err
	})
	var out []claim
	for _, c := range claims {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, err
}

// parallel runs fn(0..n-1), at most conc at a time, and returns the first error.
func parallel(n, conc int, fn func(i int) error) error {
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(i); err != nil {
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	return first
}

// claim is a ready row whose delivery workflow this sweep started in claimed mode.
type claim struct {
	row   webhook.Row
	runID string
}

// input is the delivery workflow input of row.
func (s *sweep) input(row webhook.Row, claimed bool) webhook.DeliveryInput {
	return webhook.DeliveryInput{Target: s.in.Target, Row: row, Policy: s.in.Policy, Since: s.now, Claimed: claimed}
}

// ensure makes sure a waiting row has a delivery workflow (a running one is kept).
func (s *sweep) ensure(ctx context.Context, row webhook.Row) error {
	if err := s.a.Deliveries.Ensure(ctx, s.queue, s.t.WebhookTableID(), s.input(row, false)); err != nil {
		return fmt.Errorf("ensure delivery workflow for row %s: %w", row.RecordID, err)
	}
	s.a.logger(row, row.Status).Debug("webhook delivery ensured", "workflow_id", webhook.DeliveryID(s.t.WebhookTableID(), row.RecordID))
	return nil
}

// claim starts a ready row's workflow in claimed mode; ok is false when a delivery of the row
// is running already (it owns the row).
func (s *sweep) claim(ctx context.Context, row webhook.Row) (claim, bool, error) {
	runID, ok, err := s.a.Deliveries.Claim(ctx, s.queue, s.t.WebhookTableID(), s.input(row, true))
	if err != nil {
		return claim{}, false, fmt.Errorf("claim row %s: %w", row.RecordID, err)
	}
	if !ok {
		return claim{}, false, nil
	}
	return claim{row: row, runID: runID}, true, nil
}

// deliver re-reads a chunk of claimed rows, pushes those that still want it, writes the
// outcomes back in one batch_update and reports them to the claimed workflows.
func (s *sweep) deliver(ctx context.Context, chunk []claim) (int, error) {
	ids := make([]string, len(chunk))
	for i, c := range chunk {
		ids[i] = c.row.RecordID
	}
	fresh, err := s.t.GetRows(ctx, ids)
	if err != nil {
		return 0, err
	}
	var push []webhook.Row
	outcomes := make(map[string]webhook.SweepOutcome, len(chunk))
	for _, c := range chunk {
		f, ok := fresh[c.row.RecordID]
		switch {
		case !ok:
			gone := c.row
			gone.Status = "deleted"
			outcomes[gone.RecordID] = webhook.SweepOutcome{Done: true, Row: &gone}
		case !webhook.Deliverable(f):
			s.a.logger(f, f.Status).Info("webhook row moved on since the sweep read it; not pushed")
			outcomes[f.RecordID] = webhook.SweepOutcome{Done: true, Row: &f}
		case !webhook.SameWork(c.row, f):
			outcomes[f.RecordID] = webhook.SweepOutcome{Row: &f} // the workflow checks the new TaskIDs
		default:
			push = append(push, f)
		}
	}
	payloads, failures, err := s.t.BuildPayloads(ctx, push, s.tasks)
	if err != nil {
		return 0, err
	}
	results := s.pushAll(ctx, push, payloads, failures)
	trs := make(map[string]webhook.Transition, len(push))
	for i, row := range push {
		r := results[i]
		trs[row.RecordID] = webhook.AfterAttempt(row.RetryCount, row.HasStartAt, webhook.Attempt{StartedAt: r.StartedAt, EndedAt: r.EndedAt, Err: r.Err})
	}
	// When the batch write fails, each workflow writes its own transition back (with retries):
	// the pushes happened and must not happen again.
	written := s.t.WriteBacks(ctx, trs) == nil
	for id, tr := range trs {
		outcomes[id] = webhook.SweepOutcome{Transition: &tr, Written: written}
	}
	_ = parallel(len(chunk), startConcurrency, func(i int) error {
		s.signal(ctx, chunk[i], outcomes[chunk[i].row.RecordID])
		return nil
	})
	return len(push), nil
}

// pushAll pushes the ready rows, pushConcurrency at a time; results are in rows' order.
func (s *sweep) pushAll(ctx context.Context, rows []webhook.Row, payloads map[string]*webhook.Payload, failures map[string]error) []webhook.AttemptResult {
	results := make([]webhook.AttemptResult, len(rows))
	_ = parallel(len(rows), pushConcurrency, func(i int) error {
		results[i] = s.a.push(ctx, s.in.Target, rows[i], payloads[rows[i].RecordID], failures[rows[i].RecordID])
		return nil
	})
	return results
}

// signal reports an outcome to a claimed workflow. A lost signal is not lost work: the workflow
// goes on alone after webhook.ClaimHold and re-reads the row before any push.
func (s *sweep) signal(ctx context.Context, c claim, o webhook.SweepOutcome) {
	if err := s.a.Deliveries.ReportOutcome(ctx, s.t.WebhookTableID(), c.row.RecordID, c.runID, o); err != nil {
		s.a.logger(c.row, c.row.Status).Warn("webhook sweep could not report to its claimed row",
			"workflow_id", webhook.DeliveryID(s.t.WebhookTableID(), c.row.RecordID), "err", err)
	}
}

// release hands claimed rows the sweep will not deliver back to their workflows at once.
func (s *sweep) release(ctx context.Context, rest []claim) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_ = parallel(len(rest), startConcurrency, func(i int) error {
		row := rest[i].row
		s.signal(ctx, rest[i], webhook.SweepOutcome{Row: &row})
		return nil
	})
}
