package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The baseline of the pipeline and apply scenarios: the least a Temporal-backed task can cost
// on the same dev server — one workflow that runs one activity which does nothing.

// BenchNoopWorkflow runs NoopActivity once.
func BenchNoopWorkflow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	return workflow.ExecuteActivity(ctx, NoopActivity).Get(ctx, nil)
}

// NoopActivity does nothing; it is the activity round trip the baseline measures.
func NoopActivity(context.Context) error { return nil }
