package worker

import (
	"context"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	entryacts "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/platform"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// registerEntry registers EntryTaskWorkflow and its activities.
func registerEntry(w sdkworker.Registry, p *platform.Platform) error {
	acts := &entryacts.Activities{Runs: entry.NewStore(p.Mongo), Pipelines: pipeline.NewStore(p.Mongo),
		Log: p.Log.With("subsystem", "entry")}
	if c := p.Config.Entry; c.TelegramBotToken != "" {
		acts.Bot = entry.NewBot(c.TelegramAPIBaseURL, c.TelegramBotToken)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := acts.Runs.EnsureIndexes(ctx); err != nil {
		// Mongo may be down at start; the API ensures the indexes too before accepting tasks.
		p.Log.Warn("workflow_runs indexes not ensured", "err", err)
	}
	entrywf.Register(w)
	acts.Register(w)
	return nil
}

// runEntryMonitor keeps the suspended-task gauges current and warns above the threshold.
func runEntryMonitor(ctx context.Context, p *platform.Platform) error {
	return entry.NewMonitor(p).Run(ctx)
}
