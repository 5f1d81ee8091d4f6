package worker

import (
	"context"

	sdkworker "go.temporal.io/sdk/worker"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/entry/telegrambot"
	"github.com/taskloom/taskloom/internal/platform"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// registerEntry registers EntryTaskWorkflow and its activities.
func registerEntry(w sdkworker.Registry, p *platform.Platform) error {
	acts := &entryact.Activities{Runs: entrydb.New(p.Mongo),
		Log: p.Log.With("subsystem", "entry"), Bulk: intake.NewTasks(p, entrywf.NewClient(p.Temporal, p.Config.Temporal.TaskQueue))}
	if c := p.Config.Entry; c.TelegramBotToken != "" {
		acts.Bot = telegrambot.New(c.TelegramAPIBaseURL, c.TelegramBotToken)
	}
	entrywf.Register(w, acts)
	return nil
}

// runEntryMonitor keeps the suspended-task gauges current and warns above the threshold.
func runEntryMonitor(ctx context.Context, p *platform.Platform) error {
	return intake.NewMonitor(p, entrywf.NewClient(p.Temporal, p.Config.Temporal.TaskQueue)).Run(ctx)
}
