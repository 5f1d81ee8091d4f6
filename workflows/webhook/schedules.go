package webhook

import (
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/explain"
	"github.com/taskloom/taskloom/internal/schedule"
	"github.com/taskloom/taskloom/internal/webhook"
)

// Schedule IDs.
const (
	SweepScheduleID         = "webhook-sweep"
	creatorSchedulePrefix   = "webhook-creator-"
	sweepKind, creatorKind  = "webhook-sweep", "webhook-creator"
	scheduleWorkflowTimeout = 30 * time.Minute
)

// CreatorScheduleID is the schedule of the WebhookResultCreator of app.
func CreatorScheduleID(app string) string { return creatorSchedulePrefix + app }

// TargetFrom builds the target from the config section.
func TargetFrom(c config.Webhook) webhook.Target {
	return webhook.Target{URLs: webhook.URLs{Task: c.TaskBitableURL, Webhook: c.WebhookBitableURL, Drama: c.DramaBitableURL,
		Capture: c.CaptureBitableURL}, SummaryURL: c.SummaryWebhookURL}
}

// PolicyFrom builds the delivery policy from the config section.
func PolicyFrom(c config.Webhook) webhook.Policy {
	return webhook.Policy{ReadinessBackoff: c.ReadinessBackoff, ReadinessBackoffMax: c.ReadinessBackoffMax,
		ReadinessDeadline: c.ReadinessDeadline, RetryBackoff: c.RetryBackoff}
}

// ScheduleOptions lists the webhook schedules the config asks for: the sweep (when both tables
// are configured) and one creator per WEBHOOK_CREATOR_APPS entry. `starter schedules apply`
// applies them.
func ScheduleOptions(cfg *config.Config) []client.ScheduleOptions {
	c, tq := cfg.Webhook, cfg.Temporal.TaskQueue
	if c.TaskBitableURL == "" || c.WebhookBitableURL == "" {
		return nil
	}
	t := TargetFrom(c)
	opts := []client.ScheduleOptions{SweepSchedule(c, tq)}
	for _, app := range c.CreatorApps {
		if app = strings.TrimSpace(app); app != "" {
			in := webhook.CreatorInput{URLs: t.URLs, App: app, EnableSingleURLCapture: c.EnableSingleURLCapture}
			opts = append(opts, CreatorSchedule(in, c.CreatorInterval, tq))
		}
	}
	return opts
}

// SweepSchedule is the WebhookResultWorker schedule.
func SweepSchedule(c config.Webhook, taskQueue string) client.ScheduleOptions {
	in := webhook.SweepInput{Target: TargetFrom(c), Policy: PolicyFrom(c)}
	return schedule.Explained(schedule.Every(SweepScheduleID, c.SweepInterval, sweepKind, taskQueue, scheduleWorkflowTimeout,
		WebhookResultWorker, in), explain.Summary("webhook sweep", "every "+c.SweepInterval.String()),
		explain.Details("The scheduled scan of the webhook result table: pushes the rows whose TaskIDs are all final and "+
			"hands each row that waits to its own WebhookDeliveryWorkflow.", explain.Link{Name: "Console", Path: "/ui/console/webhook"}))
}

// CreatorSchedule is the WebhookResultCreator schedule of one app.
func CreatorSchedule(in webhook.CreatorInput, every time.Duration, taskQueue string) client.ScheduleOptions {
	return schedule.Explained(schedule.Every(CreatorScheduleID(in.App), every, creatorKind, taskQueue, scheduleWorkflowTimeout,
		WebhookResultCreator, in), explain.Summary("webhook creator "+in.App, "every "+every.String()),
		explain.Details("Creates the webhook result rows of app "+in.App+"'s capture tasks that have none yet.",
			explain.Link{Name: "Console", Path: "/ui/console/webhook"}))
}
