// Package reconcile keeps the domain from contradicting Temporal in lists and the console: an
// execution ended from outside (temporal workflow terminate, the Web UI, an execution timeout)
// cannot record its own end, so its task's record would say running for ever. The API fixes a task
// when it is read (reconcile on read); the Reconciler, run by every worker, fixes the rest in
// batches from visibility — one list call per page of closed executions, then each subsystem's
// guarded write (only a non-terminal status becomes terminated, so passes on several workers and
// the API racing change a record once).
package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/workflowservice/v1"
)

// PageSize bounds one visibility page, and so the writes between two list calls.
const PageSize = 100

// Kind is one subsystem's part: its TaskloomKind and how one of its tasks follows its execution
// (read the record; when not final, describe the execution and write terminated).
type Kind struct {
	Name   string
	Follow func(ctx context.Context, workflowID string) error
}

// Visibility lists executions; client.Client satisfies it.
type Visibility interface {
	ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
}

// Reconciler fixes, every Interval, the records of tasks whose executions closed from outside
// within Lookback.
type Reconciler struct {
	Visibility Visibility
	Kinds      []Kind
	Interval   time.Duration
	Lookback   time.Duration
	Log        *slog.Logger
}

// Run passes until ctx ends; a failed pass is logged and the next one tries again.
func (r *Reconciler) Run(ctx context.Context) error {
	if r.Interval <= 0 {
		return nil
	}
	tick := time.NewTicker(r.Interval)
	defer tick.Stop()
	for {
		if n, err := r.Once(ctx); err != nil {
			r.Log.Warn("reconcile pass failed", "err", err, "followed", n)
		} else if n > 0 {
			r.Log.Info("reconcile pass", "followed", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Once is one pass over every kind; followed counts the executions whose tasks were looked at.
func (r *Reconciler) Once(ctx context.Context) (followed int, err error) {
	since := time.Now().Add(-r.Lookback).UTC().Format(time.RFC3339)
	for _, k := range r.Kinds {
		n, err := r.pass(ctx, k, since)
		followed += n
		if err != nil {
			return followed, err
		}
	}
	return followed, nil
}

// Query selects kind's executions that closed from outside since the RFC 3339 time since.
func Query(kind, since string) string {
	return fmt.Sprintf("TaskloomKind = '%s' AND ExecutionStatus IN ('Terminated', 'TimedOut', 'Canceled') AND CloseTime > '%s'", kind, since)
}

func (r *Reconciler) pass(ctx context.Context, k Kind, since string) (int, error) {
	req := &workflowservice.ListWorkflowExecutionsRequest{Query: Query(k.Name, since), PageSize: PageSize}
	n := 0
	for {
		resp, err := r.Visibility.ListWorkflow(ctx, req)
		if err != nil {
			return n, fmt.Errorf("list closed %s executions: %w", k.Name, err)
		}
		for _, e := range resp.GetExecutions() {
			// One record that cannot be fixed (none exists, the store blinked) does not hold up
			// the batch; a later pass, or the next read of that task, tries it again.
			if err := k.Follow(ctx, e.GetExecution().GetWorkflowId()); err != nil {
				r.Log.Warn("reconcile: task not followed", "kind", k.Name, "workflow_id", e.GetExecution().GetWorkflowId(), "err", err)
				continue
			}
			n++
		}
		if len(resp.GetNextPageToken()) == 0 {
			return n, nil
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}
