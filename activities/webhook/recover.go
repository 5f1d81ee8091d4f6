package webhook

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/taskloom/taskloom/internal/webhook"
)

// WebhookRecoverRows is the WebhookRecoverWorkflow's one step: it finds the result rows that
// ended failed or error with EndAt in [in.Since, in.Until), and for each re-reads it, writes it
// back to pending (RetryCount 0, no LastError) only if it is still failed or error in range, and
// ensures its webhook-{table}-{record} delivery workflow the way the sweep does for a waiting
// row; that workflow checks readiness and pushes.
//
// Idempotent under retries: a row reset by an earlier try is pending, so the search of the retry
// no longer finds it; if that try died between the reset and the ensure, the next sweep picks
// the pending row up like any other.
func (a *Activities) WebhookRecoverRows(ctx context.Context, in webhook.RecoverInput) (webhook.RecoverResult, error) {
	defer keepAlive(ctx, attemptHeartbeatEvery, func() { activity.RecordHeartbeat(ctx) })()
	t, err := a.tables(ctx, in.Target.URLs)
	if err != nil {
		return webhook.RecoverResult{}, err
	}
	rows, err := t.RecoverRows(ctx, in.Since, in.Until)
	if err != nil {
		return webhook.RecoverResult{}, nonRetryableFilter(err)
	}
	res := webhook.RecoverResult{Matched: len(rows)}
	s := &sweep{a: a, t: t, in: webhook.SweepInput{Target: in.Target, Policy: in.Policy},
		queue: activity.GetInfo(ctx).TaskQueue, now: time.Now()}
	for _, row := range rows {
		outcome, status, err := s.recover(ctx, row, in)
		if err != nil {
			return res, err
		}
		if outcome == webhook.RecoverReset {
			res.Reset++
		} else {
			res.Skipped++
		}
		if len(res.Rows) < webhook.MaxRecoverOutcomes {
			res.Rows = append(res.Rows, webhook.RecoverOutcome{RecordID: row.RecordID, Outcome: outcome, Status: status})
		}
	}
	a.Log.Info("webhook recover", "since", in.Since, "until", in.Until, "matched", res.Matched, "reset", res.Reset, "skipped", res.Skipped)
	return res, nil
}

// recover resets one row found by the search and ensures its delivery; it returns the outcome
// and the status the row had when re-read.
func (s *sweep) recover(ctx context.Context, found webhook.Row, in webhook.RecoverInput) (string, string, error) {
	rows, err := s.t.GetRows(ctx, []string{found.RecordID})
	if err != nil {
		return "", "", err
	}
	row, ok := rows[found.RecordID]
	if !ok {
		return webhook.RecoverSkipped, "deleted", nil
	}
	if !webhook.Recoverable(row, in.Since, in.Until) {
		s.a.logger(row, row.Status).Info("webhook row moved on since the recover search read it; not reset")
		return webhook.RecoverSkipped, row.Status, nil
	}
	if err := s.t.ResetRow(ctx, row.RecordID); err != nil {
		return "", "", err
	}
	was := row.Status
	row.Status, row.RetryCount, row.LastError = webhook.StatusPending, 0, ""
	if err := s.ensure(ctx, row); err != nil {
		return "", "", fmt.Errorf("recover: %w", err)
	}
	s.a.logger(row, was).Info("webhook row reset to pending for re-delivery")
	return webhook.RecoverReset, was, nil
}
