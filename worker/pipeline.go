package worker

import (
	"context"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	pipelineacts "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/platform"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// registerPipeline registers PipelineWorkflow, ProviderHealthWorkflow and their activities.
func registerPipeline(w sdkworker.Registry, p *platform.Platform) error {
	acts := pipelineacts.New(p.Config, p.Mongo, p.Log, p.Metrics)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := acts.Store.EnsureIndexes(ctx); err != nil {
		// Mongo may be down at start; activities retry, and the API ensures indexes too.
		p.Log.Warn("pipeline indexes not ensured", "err", err)
	}
	pipelinewf.Register(w)
	acts.Register(w)
	return nil
}
