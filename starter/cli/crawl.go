package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
)

func crawlCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "crawl",
		Short: "Crawl tasks: start one (runs the configured crawler)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(crawlStartCmd())
	return cmd
}

func crawlStartCmd() *cobra.Command {
	var (
		id   int64
		wait bool
	)
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the CrawlTaskWorkflow of an original task (runs the configured crawler)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if id <= 0 {
				return errors.New("--original-task-id must be a positive integer")
			}
			return runCrawlStart(cmd, id, wait)
		},
	}
	cmd.Flags().Int64Var(&id, "original-task-id", 0, "original task id (required)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for Completed or Failed and print the final state")
	return cmd
}

func runCrawlStart(c *cobra.Command, id int64, wait bool) error {
	ctx := c.Context()
	p, _, err := loadPlatform(ctx)
	if err != nil {
		return err
	}
	defer p.Close()
	cfg := p.Config
	run, err := crawlwf.Start(ctx, p.Temporal, cfg.Temporal.TaskQueue, crawlwf.Input{OriginalTaskID: id,
		Source: crawl.SourceAPI, CrawlerTimeout: cfg.Crawl.CrawlerTimeout, CompletionDeadline: cfg.Crawl.CompletionDeadline})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &started):
		return fmt.Errorf("crawl task %d was started before (workflow %s); GET /api/v1/crawl-tasks/%d shows it", id, crawlwf.WorkflowID(id), id)
	case err != nil:
		return err
	}
	if !wait {
		// POST /api/v1/crawl-tasks's answer
		return render(c, map[string]any{"original_task_id": id, "workflow_id": run.GetID(), "run_id": run.GetRunID(),
			"status": crawl.Running, "created": true})
	}
	var final crawlwf.State
	counts := countscript.FromPlatform(p)
	err = watch(ctx, os.Stderr, run.GetID()+" tweets", func(ctx context.Context) (int, int, error) {
		pr, err := counts.Get(ctx, id)
		return int(pr.ProcessedTweets), int(max(pr.TotalTweets, 0)), err
	}, func() error { return run.Get(ctx, &final) })
	if err != nil {
		return fmt.Errorf("crawl task %d: %w", id, rootCause(err))
	}
	t, err := crawldb.New(p.Mongo).Get(ctx, id)
	if err != nil {
		return fmt.Errorf("read crawl task %d: %w", id, err)
	}
	if err := render(c, t.View()); err != nil {
		return err
	}
	if final.Status != crawl.Completed {
		return fmt.Errorf("crawl task %d %s: %s", id, final.Status, final.FailureReason)
	}
	return nil
}
