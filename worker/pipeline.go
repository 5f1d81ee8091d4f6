package worker

import (
	sdkworker "go.temporal.io/sdk/worker"

	pipelineacts "github.com/taskloom/taskloom/activities/pipeline"
	"github.com/taskloom/taskloom/internal/platform"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// registerPipeline registers PipelineWorkflow, ProviderHealthWorkflow and their activities.
func registerPipeline(w sdkworker.Registry, p *platform.Platform) error {
	acts := pipelineacts.New(p.Config, p.Mongo, p.Log, p.Metrics)
	pipelinewf.Register(w)
	acts.Register(w)
	return nil
}
