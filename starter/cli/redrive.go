package cli

import (
	"context"
	"encoding/json"
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
	filter       pipeline.RedriveFilter
	since, until string
	dryRun       bool
	key          string
	rate         int
	wait         bool
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
			if f.key != "" {
				if err := pipeline.CheckIdempotencyKey(f.key); err != nil {
					return fmt.Errorf("--idempotency-key: %w", err)
				}
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
	fl.StringVar(&f.since, "failed-since", "", "bulk: only tasks that failed at or after this RFC 3339 time")
	fl.StringVar(&f.until, "failed-until", "", "bulk: only tasks that failed at or before this RFC 3339 time")
	fl.StringVar(&f.filter.Error, "error", "", "bulk: only tasks whose error_reason contains this text (any case)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "bulk: print how many tasks the filter selects, and a sample, without redriving")
	fl.StringVar(&f.key, "idempotency-key", "", "makes the command safe to repeat: the same key redrives nothing twice")
	fl.IntVar(&f.rate, "rate", pipelinewf.DefaultBulkBatchSize, "bulk: tasks redriven per second")
	fl.BoolVar(&f.wait, "wait", true, "bulk: print the operation's progress until it finishes")
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
	if f.filter.FailedSince, err = cliTime("--failed-since", f.since); err != nil {
		return err
	}
	if f.filter.FailedUntil, err = cliTime("--failed-until", f.until); err != nil {
		return err
	}
	if f.rate < 1 || f.rate > 100 {
		return fmt.Errorf("--rate: %d must be between 1 and 100", f.rate)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	applied := f.filter.Within(now, window, now)
	n, sample, err := store.CountRedrivable(ctx, applied, 10)
	if err != nil {
		return err
	}
	if f.dryRun {
		fmt.Fprintf(out, "%d failed tasks would be redriven\n", n)
		for _, id := range sample {
			fmt.Fprintln(out, id)
		}
		return nil
	}
	bulkID := pipeline.NewTaskID()
	if f.key != "" {
		bulkID = pipeline.BulkIDForKey(cliKeyScope, f.key)
	}
	started, err := workflows.StartBulkRedrive(ctx, pipelinewf.BulkInput{ID: bulkID, Requested: f.filter, Filter: applied,
		BatchSize: f.rate, Interval: pipelinewf.DefaultBulkInterval, Progress: pipelinewf.BulkProgress{Total: n}})
	if err != nil {
		return err
	}
	verb := "started"
	if !started {
		verb = "already started by an earlier run with this key"
	}
	fmt.Fprintf(out, "bulk redrive %s %s (workflow %s)\n", bulkID, verb, pipelinewf.BulkWorkflowID(bulkID))
	if !f.wait {
		return nil
	}
	p, err := followBulk(ctx, out, workflows, bulkID)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(p.Outcomes)
}

// followBulk shows a bulk redrive's progress until it finishes and returns its last progress.
func followBulk(ctx context.Context, out io.Writer, workflows *pipelinewf.Client, bulkID string) (*pipelinewf.BulkProgress, error) {
	var last *pipelinewf.BulkProgress
	err := followBulkOp(ctx, out, "redrive "+bulkID, func(ctx context.Context) (bulkView, error) {
		p, err := workflows.BulkProgress(ctx, bulkID)
		if err != nil {
			return bulkView{}, err
		}
		last = p
		return bulkView{done: p.Done, total: int(p.Total), finished: p.Finished, outcome: fmt.Sprintf(
			"%d/%d redriven=%d skipped=%d errors=%d", p.Done, p.Total, p.Redriven, p.Skipped, p.Errors)}, nil
	})
	return last, err
}

func cliTime(flag, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", flag, v)
	}
	t = t.UTC()
	return &t, nil
}
