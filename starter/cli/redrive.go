package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/platform"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// redriveFlags are `starter pipeline redrive`'s flags: the bulk filter and how to run.
type redriveFlags struct {
	bulkFlags
	filter       pipeline.RedriveFilter
	since, until string
}

func pipelineRedriveCmd() *cobra.Command {
	var f redriveFlags
	cmd := &cobra.Command{
		Use:   "redrive [TASK_ID]",
		Short: "Continue failed pipeline tasks from their failed step: one task by id, or every failed task a filter selects",
		Long: "With TASK_ID: redrive that failed task (docs/operations.md \"Redrive\"). Without: a bulk redrive of the failed tasks the\n" +
			"filter flags select (within PIPELINE_REDRIVE_WINDOW); --dry-run prints the count and a sample, otherwise the\n" +
			"bulk operation starts and, with --wait (the default), its progress is printed until it finishes.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				for _, name := range []string{"pipeline", "version", "user", "provider", "failed-since", "failed-until", "error", "dry-run", "rate"} {
					if c.Flags().Changed(name) {
						return fmt.Errorf("--%s selects tasks for a bulk redrive; give either TASK_ID or filter flags", name)
					}
				}
			}
			if err := f.checkKey(); err != nil {
				return err
			}
			return withSchema(c, func(ctx context.Context, p *platform.Platform) error {
				store := pipelinedb.New(p.Mongo)
				workflows := &pipelinewf.Client{Temporal: p.Temporal, TaskQueue: p.Config.Temporal.TaskQueue}
				if len(args) == 1 {
					return redriveOne(ctx, c.OutOrStdout(), store, workflows, p.Config.Pipeline.RedriveWindow, args[0], f.key)
				}
				return redriveBulk(ctx, c.OutOrStdout(), store, workflows, p.Config.Pipeline.RedriveWindow, f)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.filter.Pipeline, "pipeline", "", "bulk: only tasks of this pipeline")
	fl.StringVar(&f.filter.Version, "version", "", "bulk: only tasks of this pipeline version")
	fl.StringVar(&f.filter.UserID, "user", "", "bulk: only tasks of this user_id")
	fl.StringVar(&f.filter.Provider, "provider", "", "bulk: only tasks whose failed step last called this provider")
	addTimeRange(fl, &f.since, &f.until, "failed", "bulk: only tasks that failed")
	fl.StringVar(&f.filter.Error, "error", "", "bulk: only tasks whose error_reason contains this text (any case)")
	f.add(fl, "bulk: ")
	return cmd
}

func redriveOne(ctx context.Context, out io.Writer, store *pipelinedb.Store, workflows *pipelinewf.Client, window time.Duration,
	taskID, key string) error {
	task, err := store.GetTask(ctx, taskID)
	if err != nil {
		return err
	}
	redriveID := "req:" + pipeline.NewTaskID()
	if key != "" {
		redriveID = pipeline.RedriveIDForKey(cliKeyScope, task.ID, key)
	}
	if _, err := workflows.RedriveTask(ctx, task, redriveID, "", window); err != nil {
		return err
	}
	if task, err = store.GetTask(ctx, taskID); err != nil {
		return err
	}
	rd := task.RedriveOf(redriveID)
	fmt.Fprintf(out, "task %s redriven from step %d (%s), redrive_count %d, status %s\n", task.ID, rd.FromStep, rd.FromStepName,
		task.RedriveCount, task.Status)
	return nil
}

func redriveBulk(ctx context.Context, out io.Writer, store *pipelinedb.Store, workflows *pipelinewf.Client, window time.Duration,
	f redriveFlags) error {
	var err error
	if f.filter.FailedSince, f.filter.FailedUntil, err = timeRange("failed", f.since, f.until); err != nil {
		return err
	}
	r := bulkRun[pipeline.RedriveFilter, struct{}, pipeline.RedriveOutcome]{plan: workflows.BulkRedrivePlan(store.CountRedrivable, window),
		would: "failed tasks would be redriven", label: "redrive", applied: "redriven"}
	return r.run(ctx, out, f.filter, f.bulkFlags)
}
