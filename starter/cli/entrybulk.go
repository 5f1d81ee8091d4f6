package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
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
	bulkFlags
	filter       entry.BulkFilter
	since, until string
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
			if err := f.checkKey(); err != nil {
				return err
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
	addTimeRange(fl, &f.since, &f.until, "suspended", "only tasks suspended")
	fl.StringVar(&f.filter.Reason, "reason-contains", "", "only tasks whose suspended reason contains this text (any case)")
	f.add(fl, "")
	fl.StringVar(&f.reason, "reason", "", "the reason recorded with each task's signal")
	return cmd
}

func entryBulk(ctx context.Context, out io.Writer, runs *entrydb.Store, workflows *entrywf.Client, op string, f entryBulkFlags) error {
	var err error
	if f.filter.SuspendedSince, f.filter.SuspendedUntil, err = timeRange("suspended", f.since, f.until); err != nil {
		return err
	}
	r := bulkRun[entry.BulkFilter, entry.SignalPayload, entry.BulkOutcome]{plan: workflows.BulkPlan(op, runs.CountSuspended),
		params: entry.SignalPayload{Operator: "cli", Reason: f.reason}, would: "suspended tasks would be " + pastTense(op),
		label: "bulk " + op, applied: "applied"}
	return r.run(ctx, out, f.filter, f.bulkFlags)
}

// pastTense is "resumed" or "dropped".
func pastTense(op string) string {
	if op == entry.BulkDrop {
		return "dropped"
	}
	return "resumed"
}
