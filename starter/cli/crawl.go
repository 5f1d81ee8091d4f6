package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/progress"
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
			return runCrawlStart(cmd.Context(), id, wait)
		},
	}
	cmd.Flags().Int64Var(&id, "original-task-id", 0, "original task id (required)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for Completed or Failed and print the final state")
	return cmd
}

func runCrawlStart(ctx context.Context, id int64, wait bool) error {
	p, _, err := loadPlatform(ctx)
	if err != nil {
		return err
	}
	defer p.Close()
	cfg := p.Config
	run, err := crawlwf.Start(ctx, p.Temporal, cfg.Temporal.TaskQueue, crawlwf.Input{OriginalTaskID: id,
		Source: crawl.SourceAPI, CrawlerTimeout: cfg.Crawl.CrawlerTimeout, CompletionDeadline: cfg.Crawl.CompletionDeadline})
	if err != nil {
		return err
	}
	fmt.Printf("started %s (run %s)\n", run.GetID(), run.GetRunID())
	if !wait {
		return nil
	}
	var final crawlwf.State
	counts := progress.FromPlatform(p)
	err = watch(ctx, os.Stderr, run.GetID()+" tweets", func(ctx context.Context) (int, int, error) {
		pr, err := counts.Get(ctx, id)
		return int(pr.ProcessedTweets), int(max(pr.TotalTweets, 0)), err
	}, func() error { return run.Get(ctx, &final) })
	if err != nil {
		return fmt.Errorf("wait for %s: %w", run.GetID(), err)
	}
	out, err := json.MarshalIndent(final, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	if final.Status != crawl.Completed {
		return fmt.Errorf("crawl task %d %s: %s", id, final.Status, final.FailureReason)
	}
	return nil
}
