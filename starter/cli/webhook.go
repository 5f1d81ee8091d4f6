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
	"github.com/taskloom/taskloom/internal/schedule"
	"github.com/taskloom/taskloom/internal/webhook"
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
