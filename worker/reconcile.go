package worker

import (
	"context"
	"fmt"
	"strings"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/reconcile"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// runReconciler makes the records of pipeline, entry and crawl tasks whose executions were ended
// from outside say terminated (internal/reconcile), every RECONCILE_INTERVAL.
func runReconciler(ctx context.Context, p *platform.Platform) error {
	queue := p.Config.Temporal.TaskQueue
	pipelines, pipelineWF := pipelinedb.New(p.Mongo), &pipelinewf.Client{Temporal: p.Temporal, TaskQueue: queue}
	entries := &intake.Tasks{Runs: entrydb.New(p.Mongo), Workflows: entrywf.NewClient(p.Temporal, queue), Visibility: p.Temporal}
	crawls := crawldb.New(p.Mongo)
	r := &reconcile.Reconciler{Visibility: p.Temporal, Interval: p.Config.Worker.ReconcileInterval,
		Lookback: p.Config.Worker.ReconcileLookback, Log: p.Log.With("service", "reconciler"),
		Kinds: []reconcile.Kind{
			{Name: pipelinewf.Kind, Follow: func(ctx context.Context, wfID string) error {
				id := strings.TrimPrefix(wfID, pipelinewf.WorkflowID(""))
				_, err := pipelines.Follow(ctx, id, func(ctx context.Context) (*closure.Closure, error) { return pipelineWF.Closure(ctx, id) })
				return err
			}},
			{Name: entry.Kind, Follow: func(ctx context.Context, wfID string) error {
				_, err := entries.Status(ctx, wfID)
				return err
			}},
			{Name: crawlwf.Kind, Follow: func(ctx context.Context, wfID string) error {
				id, ok := crawlwf.OriginalTaskID(wfID)
				if !ok {
					return fmt.Errorf("not a crawl task's workflow ID")
				}
				_, err := crawls.Follow(ctx, id, func(ctx context.Context) (*closure.Closure, error) { return crawlwf.Closure(ctx, p.Temporal, id) })
				return err
			}},
		}}
	if err := r.Run(ctx); err != nil {
		return fmt.Errorf("reconciler: %w", err)
	}
	return nil
}
