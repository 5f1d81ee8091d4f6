package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/platform"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

func entryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "entry",
		Short: "Entry tasks: bulk resume or drop of suspended tasks",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(entryBulkCmd(entry.BulkResume), entryBulkCmd(entry.BulkDrop))
	return cmd
}

// entryBulkFlags are `starter entry resume|drop`'s flags: the filter and how to run.
type entryBulkFlags struct {
	filter       entry.BulkFilter
	since, until string
	dryRun       bool
	key          string
	rate         int
	wait         bool
	reason       string
}

func entryBulkCmd(op string) *cobra.Command {
	var f entryBulkFlags
	cmd := &cobra.Command{
		Use:   op,
		Short: "Bulk " + op + " of the suspended entry tasks a filter selects",
		Long: "Every suspended entry task the filter flags select is " + pastTense(op) + " through the single-task path\n" +
			"(docs/operations.md \"Redrive\"); --dry-run prints the count and a sample, otherwise the bulk operation starts and, with --wait\n" +
			"(the default), its progress is printed until it finishes.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if f.key != "" {
				if err := pipeline.CheckIdempotencyKey(f.key); err != nil {
					return fmt.Errorf("--idempotency-key: %w", err)
				}
			}
			return withSchema(c, func(ctx context.Context, p *platform.Platform) error {
				return entryBulk(ctx, c.OutOrStdout(), entrydb.New(p.Mongo), entrywf.NewClient(p.Temporal, p.Config.Temporal.TaskQueue), op, f)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.filter.WorkflowID, "workflow", "", "only tasks of this pipeline (the apply request's workflowId)")
	fl.StringVar(&f.filter.Channel, "channel", "", "only tasks of this channel (http, telegram)")
	fl.StringVar(&f.filter.ChatID, "chat", "", "only tasks of this chat id")
	fl.StringVar(&f.since, "suspended-since", "", "only tasks suspended at or after this RFC 3339 time")
	fl.StringVar(&f.until, "suspended-until", "", "only tasks suspended at or before this RFC 3339 time")
	fl.StringVar(&f.filter.Reason, "reason-contains", "", "only tasks whose suspended reason contains this text (any case)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print how many tasks the filter selects, and a sample, and change nothing")
	fl.StringVar(&f.key, "idempotency-key", "", "makes the command safe to repeat: the same key touches no task twice")
	fl.IntVar(&f.rate, "rate", entrywf.DefaultBulkBatchSize, "tasks per second")
	fl.BoolVar(&f.wait, "wait", true, "print the operation's progress until it finishes")
	fl.StringVar(&f.reason, "reason", "", "the reason recorded with each task's signal")
	return cmd
}

func entryBulk(ctx context.Context, out io.Writer, runs *entrydb.Store, workflows *entrywf.Client, op string, f entryBulkFlags) error {
	var err error
	if f.filter.SuspendedSince, err = cliTime("--suspended-since", f.since); err != nil {
		return err
	}
	if f.filter.SuspendedUntil, err = cliTime("--suspended-until", f.until); err != nil {
		return err
	}
	if f.rate < 1 || f.rate > 100 {
		return fmt.Errorf("--rate: %d must be between 1 and 100", f.rate)
	}
	applied := f.filter.Until(time.Now().UTC().Truncate(time.Millisecond))
	n, sample, err := runs.CountSuspended(ctx, applied, 10)
	if err != nil {
		return err
	}
	if f.dryRun {
		fmt.Fprintf(out, "%d suspended tasks would be %s\n", n, pastTense(op))
		for _, id := range sample {
			fmt.Fprintln(out, id)
		}
		return nil
	}
	bulkID := pipeline.NewTaskID()
	if f.key != "" {
		bulkID = entry.BulkIDForKey(op, cliKeyScope, f.key)
	}
	started, err := workflows.StartBulk(ctx, entrywf.BulkInput{Op: op, ID: bulkID, Requested: f.filter, Filter: applied,
		Payload: entry.SignalPayload{Operator: "cli", Reason: f.reason}, BatchSize: f.rate, Interval: entrywf.DefaultBulkInterval,
		Progress: entrywf.BulkProgress{Total: n}})
	if err != nil {
		return err
	}
	verb := "started"
	if !started {
		verb = "already started by an earlier run with this key"
	}
	fmt.Fprintf(out, "bulk %s %s %s (workflow %s)\n", op, bulkID, verb, entrywf.BulkWorkflowID(op, bulkID))
	if !f.wait {
		return nil
	}
	p, err := followEntryBulk(ctx, out, workflows, op, bulkID)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(p.Outcomes)
}

// followEntryBulk shows a bulk resume/drop's progress until it finishes and returns its last progress.
func followEntryBulk(ctx context.Context, out io.Writer, workflows *entrywf.Client, op, bulkID string) (*entrywf.BulkProgress, error) {
	var last *entrywf.BulkProgress
	err := followBulkOp(ctx, out, "bulk "+op+" "+bulkID, func(ctx context.Context) (bulkView, error) {
		p, err := workflows.BulkProgress(ctx, op, bulkID)
		if err != nil {
			return bulkView{}, err
		}
		last = p
		return bulkView{done: p.Done, total: int(p.Total), finished: p.Finished, outcome: fmt.Sprintf(
			"%d/%d applied=%d skipped=%d errors=%d", p.Done, p.Total, p.Applied, p.Skipped, p.Errors)}, nil
	})
	return last, err
}

// pastTense is "resumed" or "dropped".
func pastTense(op string) string {
	if op == entry.BulkDrop {
		return "dropped"
	}
	return "resumed"
}
