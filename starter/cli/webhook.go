package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/schedule"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// webhookFlags are the table/receiver flags shared by the webhook commands; each defaults
// to its environment variable.
type webhookFlags struct {
	taskURL, webhookTableURL, dramaURL, captureURL, summaryURL string
}

func (f *webhookFlags) bind(cmd *cobra.Command, withSummary bool) {
	cmd.Flags().StringVar(&f.taskURL, "task-url", os.Getenv("TASK_BITABLE_URL"), "task status table URL (TASK_BITABLE_URL)")
	cmd.Flags().StringVar(&f.webhookTableURL, "webhook-bitable-url", os.Getenv("WEBHOOK_BITABLE_URL"), "webhook result table URL (WEBHOOK_BITABLE_URL)")
	cmd.Flags().StringVar(&f.dramaURL, "drama-url", os.Getenv("DRAMA_BITABLE_URL"), "drama table URL (DRAMA_BITABLE_URL)")
	cmd.Flags().StringVar(&f.captureURL, "capture-url", os.Getenv("CAPTURE_BITABLE_URL"), "capture result table URL (CAPTURE_BITABLE_URL)")
	if withSummary {
		cmd.Flags().StringVar(&f.summaryURL, "webhook-url", os.Getenv("SUMMARY_WEBHOOK_URL"), "summary webhook receiver (SUMMARY_WEBHOOK_URL)")
	}
}

// apply overrides the config section with the flags that are set (a flag left empty keeps the
// configuration's value, which includes the dev stack's .data/dev.env).
func (f *webhookFlags) apply(c *config.Webhook) error {
	for _, o := range []struct {
		flag string
		dst  *string
	}{
		{f.taskURL, &c.TaskBitableURL}, {f.webhookTableURL, &c.WebhookBitableURL}, {f.dramaURL, &c.DramaBitableURL},
		{f.captureURL, &c.CaptureBitableURL}, {f.summaryURL, &c.SummaryWebhookURL},
	} {
		if o.flag != "" {
			*o.dst = o.flag
		}
	}
	for name, u := range map[string]string{"--task-url": c.TaskBitableURL, "--webhook-bitable-url": c.WebhookBitableURL} {
		if _, err := feishu.ParseTableURL(u); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// webhookWorkerCmd: `starter webhook-worker`. Without filters it creates/updates the sweep
// schedule (the polling WebhookResultWorker); with --group-id or --date it runs one scan and
// exits, for reproducing a group or a day precisely.
func webhookWorkerCmd() *cobra.Command {
	var f webhookFlags
	var groupID, date string
	cmd := &cobra.Command{
		Use:   "webhook-worker",
		Short: "Poll the webhook result table (schedule), or scan once with --group-id/--date",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if date != "" {
				if _, err := time.Parse(feishu.DayLayout, date); err != nil {
					return fmt.Errorf("--date: want YYYY-MM-DD: %w", err)
				}
			}
			return withWebhookPlatform(cmd.Context(), &f, func(ctx context.Context, c client.Client, cfg *config.Config) error {
				if groupID == "" && date == "" {
					s := webhookwf.SweepSchedule(cfg.Webhook, cfg.Temporal.TaskQueue)
					if err := schedule.Apply(ctx, c, s); err != nil {
						return err
					}
					return render(cmd, viewOf(s))
				}
				in := webhookwf.SweepInputFor(cfg.Webhook, webhook.RowFilter{GroupID: groupID, Date: date})
				id := webhookwf.SweepID("cli", time.Now())
				run, err := webhookwf.StartSweep(ctx, c, cfg.Temporal.TaskQueue, id, in)
				return printResult(cmd, run, err, &webhook.SweepResult{})
			})
		},
	}
	f.bind(cmd, true)
	cmd.Flags().StringVar(&groupID, "group-id", "", "only rows of this GroupID (one scan, no polling)")
	cmd.Flags().StringVar(&date, "date", "", "only rows whose Date is this YYYY-MM-DD (one scan, no polling)")
	return cmd
}

// webhookCreatorCmd: `starter webhook-creator --app kwai [--poll-interval 30s]`. One run by
// default; with --poll-interval it creates/updates the app's creator schedule.
func webhookCreatorCmd() *cobra.Command {
	var f webhookFlags
	var app, date string
	var every time.Duration
	var singleURL bool
	cmd := &cobra.Command{
		Use:   "webhook-creator",
		Short: "Create webhook result rows for an app once, or on a schedule with --poll-interval",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if app == "" {
				return fmt.Errorf("--app is required")
			}
			return withWebhookPlatform(cmd.Context(), &f, func(ctx context.Context, c client.Client, cfg *config.Config) error {
				in := webhook.CreatorInput{URLs: webhookwf.TargetFrom(cfg.Webhook).URLs, App: app, EnableSingleURLCapture: singleURL || cfg.Webhook.EnableSingleURLCapture, ScanDate: date}
				if every > 0 {
					s := webhookwf.CreatorSchedule(in, every, cfg.Temporal.TaskQueue)
					if err := schedule.Apply(ctx, c, s); err != nil {
						return err
					}
					return render(cmd, viewOf(s))
				}
				var res webhookwf.CreatorResult
				run, err := webhookwf.StartCreator(ctx, c, cfg.Temporal.TaskQueue, webhookwf.CreatorID(app, time.Now()), in)
				return printResult(cmd, run, err, &res)
			})
		},
	}
	f.bind(cmd, false)
	cmd.Flags().StringVar(&app, "app", "", "app whose tasks get rows (e.g. kwai)")
	cmd.Flags().DurationVar(&every, "poll-interval", 0, "run on a schedule with this interval instead of once")
	cmd.Flags().BoolVar(&singleURL, "enable-single-url-capture", false, "also aggregate 单个链接采集 tasks per (GroupID, Date)")
	cmd.Flags().StringVar(&date, "date", "", "single URL scan date YYYY-MM-DD")
	return cmd
}

// webhookGroupsCmd: `starter webhook-groups --parent-task-id N` runs CreateWebhookResultsForGroups.
func webhookGroupsCmd() *cobra.Command {
	var f webhookFlags
	var parent string
	cmd := &cobra.Command{
		Use:   "webhook-groups",
		Short: "Create piracy_general_search rows for a finished 综合页搜索 parent task",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withWebhookPlatform(cmd.Context(), &f, func(ctx context.Context, c client.Client, cfg *config.Config) error {
				var res webhook.CreateResult
				in := webhookwf.GroupsInputFor(cfg.Webhook, parent)
				run, err := webhookwf.StartGroups(ctx, c, cfg.Temporal.TaskQueue, in)
				return printResult(cmd, run, err, &res)
			})
		},
	}
	f.bind(cmd, false)
	cmd.Flags().StringVar(&parent, "parent-task-id", "", "TaskID of the 综合页搜索 parent task")
	_ = cmd.MarkFlagRequired("parent-task-id")
	return cmd
}

func withWebhookPlatform(ctx context.Context, f *webhookFlags, fn func(context.Context, client.Client, *config.Config) error) error {
	p, _, err := loadPlatform(ctx)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := f.apply(&p.Config.Webhook); err != nil {
		return err
	}
	return explainDevEnv(ctx, fn(ctx, p.Temporal, p.Config))
}

// printResult waits for a run started by a workflows/webhook client helper (startErr is the
// helper's error) and prints it as the HTTP API answers a sweep or a group run: the workflow id
// and the result.
func printResult(c *cobra.Command, run client.WorkflowRun, startErr error, out any) error {
	if startErr != nil {
		return startErr
	}
	if err := run.Get(c.Context(), out); err != nil {
		return fmt.Errorf("%s failed: %w", run.GetID(), rootCause(err))
	}
	return render(c, map[string]any{"workflow_id": run.GetID(), "result": out})
}

// webhookCmd groups the operator commands on the webhook result table.
func webhookCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "webhook", Short: "Webhook result table operations", Args: cobra.NoArgs}
	cmd.AddCommand(webhookRecoverCmd())
	return cmd
}

// webhookRecoverCmd: `starter webhook recover --since T [--until T] [--dry-run] [--idempotency-key K]`
// re-delivers the result rows that ended failed or error with EndAt in [since, until), like
// POST /api/v1/webhook/recover.
func webhookRecoverCmd() *cobra.Command {
	var f webhookFlags
	var sinceS, untilS, key string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "recover",
		Short: "Re-deliver the result rows that ended failed or error since --since",
		Long: "Every result row whose Status is failed or error and whose EndAt is in [--since, --until) is written back to\n" +
			"pending and handed to its delivery workflow by one WebhookRecoverWorkflow (docs/operations.md \"Redrive\"); --dry-run prints\n" +
			"the count and a sample. The same --idempotency-key (or the same range) again finds the same run.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			since, err := time.Parse(time.RFC3339, sinceS)
			if err != nil {
				return fmt.Errorf("--since: want an RFC 3339 time such as 2026-01-02T15:04:05Z: %w", err)
			}
			until := time.Now().UTC().Truncate(time.Second)
			if untilS != "" {
				if until, err = time.Parse(time.RFC3339, untilS); err != nil {
					return fmt.Errorf("--until: want an RFC 3339 time such as 2026-01-02T15:04:05Z: %w", err)
				}
			}
			if !until.After(since) {
				return fmt.Errorf("--until must be after --since")
			}
			if key != "" {
				if err := pipeline.CheckIdempotencyKey(key); err != nil {
					return fmt.Errorf("--idempotency-key: %w", err)
				}
			}
			return withWebhookPlatform(cmd.Context(), &f, func(ctx context.Context, c client.Client, cfg *config.Config) error {
				if dryRun {
					return recoverDryRun(cmd, cfg.Webhook, since, until)
				}
				id := webhookwf.RecoverID("cli", key, since, until)
				created, err := webhookwf.StartRecover(ctx, c, cfg.Temporal.TaskQueue, id, webhookwf.RecoverInputFor(cfg.Webhook, since, until))
				if err != nil {
					return err
				}
				res, err := webhookwf.RecoverResultOf(ctx, c, id)
				if err != nil {
					return fmt.Errorf("%s failed: %w", id, rootCause(err))
				}
				return render(cmd, map[string]any{"workflow_id": id, "created": created, "result": res})
			})
		},
	}
	f.bind(cmd, false)
	cmd.Flags().StringVar(&sinceS, "since", "", "rows that ended at or after this RFC 3339 time")
	cmd.Flags().StringVar(&untilS, "until", "", "rows that ended before this RFC 3339 time (default now)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the count and a sample of record ids; change nothing")
	cmd.Flags().StringVar(&key, "idempotency-key", "", "names the run: the same key again finds it instead of starting another")
	_ = cmd.MarkFlagRequired("since")
	return cmd
}

// recoverDryRun reads the rows a recover would reset and prints their count and a sample.
func recoverDryRun(cmd *cobra.Command, cfg config.Webhook, since, until time.Time) error {
	fs, err := bitable.NewFeishuClient(cfg)
	if err != nil {
		return err
	}
	if fs == nil {
		return fmt.Errorf("feishu is not configured: set FEISHU_APP_ID and FEISHU_APP_SECRET (or run the dev stack)")
	}
	t, err := bitable.Open(cmd.Context(), fs, webhookwf.TargetFrom(cfg).URLs, webhook.FieldNamesFrom(cfg))
	if err != nil {
		return err
	}
	rows, err := t.RecoverRows(cmd.Context(), since.UTC(), until.UTC())
	if err != nil {
		return err
	}
	sample := []string{}
	for _, r := range rows[:min(len(rows), 20)] {
		sample = append(sample, r.RecordID)
	}
	return render(cmd, map[string]any{"dry_run": true, "count": len(rows), "sample": sample, "since": since.UTC(), "until": until.UTC()})
}
