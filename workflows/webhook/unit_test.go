package webhook_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/webhook"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// The tests in this file run the workflows in the SDK's test environment with the activities
// mocked by method value, the way the workflows call them; the integration tests in api/webhook
// run them on a dev server against the Bitable emulator.

func newUnitEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	e.RegisterActivity(&webhookact.Activities{})
	return e
}

// A row whose tasks are still running waits; a failed push is written back as failed with
// StartAt, retried after RetryBackoff, and the successful push is written back as success.
func TestDeliveryWaitsRetriesAFailedPushThenSucceeds(t *testing.T) {
	e := newUnitEnv()
	var a *webhookact.Activities
	t0 := time.Date(2025, 12, 17, 10, 0, 0, 0, time.UTC)
	attempts := []webhook.AttemptResult{
		{Waiting: []string{"1=running"}},
		{Ready: true, StartedAt: t0, EndedAt: t0.Add(time.Second), Err: "summary webhook answered HTTP 500"},
		{Ready: true, StartedAt: t0.Add(time.Minute), EndedAt: t0.Add(time.Minute + time.Second)},
	}
	e.OnActivity(a.WebhookAttempt, mock.Anything, mock.Anything).Return(func(context.Context, webhook.AttemptInput) (webhook.AttemptResult, error) {
		res := attempts[0]
		attempts = attempts[1:]
		return res, nil
	})
	var writes []webhook.Transition
	e.OnActivity(a.WebhookWriteBack, mock.Anything, mock.Anything).Return(func(_ context.Context, in webhook.WriteBackInput) error {
		if in.RecordID != "rec1" {
			t.Errorf("write-back to %s, want rec1", in.RecordID)
		}
		writes = append(writes, in.Transition)
		return nil
	})

	e.ExecuteWorkflow(webhookwf.WebhookDeliveryWorkflow, webhook.DeliveryInput{
		Target: webhook.Target{URLs: webhook.URLs{Task: "task-url", Webhook: "webhook-url"}, SummaryURL: "summary-url"},
		Row:    webhook.Row{RecordID: "rec1", BizType: webhook.BizSingleURLCapture, Status: webhook.StatusPending, TaskIDs: []string{"1"}},
		Policy: webhook.Policy{ReadinessBackoff: 10 * time.Second, ReadinessDeadline: time.Hour, RetryBackoff: 30 * time.Second},
	})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out webhookwf.DeliveryOutcome
	if err := e.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Status != webhook.StatusSuccess || out.RetryCount != 0 || len(attempts) != 0 {
		t.Fatalf("outcome %+v with %d attempts left", out, len(attempts))
	}
	if len(writes) != 2 || writes[0].Status != webhook.StatusFailed || writes[0].RetryCount != 1 || writes[0].StartAt == nil ||
		writes[1].Status != webhook.StatusSuccess || writes[1].StartAt != nil {
		t.Fatalf("write-backs %+v, want failed (with StartAt) then success", writes)
	}
}

// A failed escalation of the task table is logged, not fatal: the scan still runs and its
// counts are the result.
func TestResultWorkerScansWhenEscalationFails(t *testing.T) {
	e := newUnitEnv()
	var a *webhookact.Activities
	e.OnActivity(a.WebhookEscalateFailedTasks, mock.Anything, mock.Anything).
		Return(0, temporal.NewNonRetryableApplicationError("task table unreadable", "Test", nil))
	e.OnActivity(a.WebhookSweepRows, mock.Anything, mock.Anything).
		Return(webhook.SweepResult{Candidates: 5, Ensured: 5, Delivered: 2}, nil)

	e.ExecuteWorkflow(webhookwf.WebhookResultWorker, webhook.SweepInput{Target: webhook.Target{URLs: webhook.URLs{Task: "task-url", Webhook: "webhook-url"}}})
	var res webhook.SweepResult
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res != (webhook.SweepResult{Candidates: 5, Ensured: 5, Delivered: 2}) {
		t.Fatalf("result %+v", res)
	}
}

// The single_url_capture creator runs only with EnableSingleURLCapture.
func TestCreatorRunsSingleURLOnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		e := newUnitEnv()
		var a *webhookact.Activities
		e.OnActivity(a.WebhookCreateVideoRows, mock.Anything, mock.Anything).Return(webhook.CreateResult{Created: 2}, nil)
		singleURLRuns := 0
		e.OnActivity(a.WebhookCreateSingleURLRows, mock.Anything, mock.Anything).Return(func(context.Context, webhook.CreatorInput) (webhook.CreateResult, error) {
			singleURLRuns++
			return webhook.CreateResult{Created: 1}, nil
		})

		e.ExecuteWorkflow(webhookwf.WebhookResultCreator, webhook.CreatorInput{App: "kwai", EnableSingleURLCapture: enabled})
		var res webhookwf.CreatorResult
		if err := e.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		want := 0
		if enabled {
			want = 1
		}
		if res.Video.Created != 2 || res.SingleURL.Created != want || singleURLRuns != want {
			t.Fatalf("enabled=%v: result %+v, single URL ran %d times", enabled, res, singleURLRuns)
		}
	}
}

// A claimed run whose sweep never reports sets no timer and calls no activity: it ends when the
// claim's run timeout (webhook.ClaimHold) passes, and the next sweep finds the row as it is.
func TestClaimedRunWithoutOutcomeEndsAtItsRunTimeout(t *testing.T) {
	e := newUnitEnv()
	e.SetWorkflowRunTimeout(webhook.ClaimHold)
	timers := 0
	e.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
	e.ExecuteWorkflow(webhookwf.WebhookDeliveryWorkflow, webhook.DeliveryInput{
		Target:  webhook.Target{URLs: webhook.URLs{Task: "task-url", Webhook: "webhook-url"}, SummaryURL: "summary-url"},
		Row:     webhook.Row{RecordID: "rec1", BizType: webhook.BizSingleURLCapture, Status: webhook.StatusPending, TaskIDs: []string{"1"}},
		Claimed: true,
	})
	var timeout *temporal.TimeoutError
	if err := e.GetWorkflowError(); !errors.As(err, &timeout) {
		t.Fatalf("claimed run without an outcome ended with %v, want its run timeout", err)
	}
	if timers != 0 {
		t.Fatalf("%d timers in a claimed run, want none", timers)
	}
}

// The sweep's outcome of a delivered row ends the claimed run at once: no timer, no activity,
// no search-attribute upsert (pending → success).
func TestClaimedRunEndsOnItsSweepsOutcome(t *testing.T) {
	e := newUnitEnv()
	e.SetWorkflowRunTimeout(webhook.ClaimHold)
	timers, upserts := 0, 0
	e.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
	e.OnUpsertTypedSearchAttributes(mock.Anything).Return(func(temporal.SearchAttributes) error { upserts++; return nil }).Maybe()
	now := time.Date(2025, 12, 17, 10, 0, 0, 0, time.UTC)
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(webhookwf.SignalSweepOutcome, webhook.SweepOutcome{Written: true,
			Transition: &webhook.Transition{Status: webhook.StatusSuccess, StartAt: &now, EndAt: now}})
	}, time.Second)
	e.ExecuteWorkflow(webhookwf.WebhookDeliveryWorkflow, webhook.DeliveryInput{
		Target:  webhook.Target{URLs: webhook.URLs{Task: "task-url", Webhook: "webhook-url"}, SummaryURL: "summary-url"},
		Row:     webhook.Row{RecordID: "rec1", BizType: webhook.BizSingleURLCapture, Status: webhook.StatusPending, TaskIDs: []string{"1"}},
		Claimed: true,
	})
	var out webhookwf.DeliveryOutcome
	if err := e.GetWorkflowResult(&out); err != nil || out.Status != webhook.StatusSuccess {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if timers != 0 || upserts != 0 {
		t.Fatalf("%d timers and %d upserts, want none", timers, upserts)
	}
}
