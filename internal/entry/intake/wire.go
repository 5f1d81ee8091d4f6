package intake

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/platform"
)

// NewSubmitter builds the submitter over the platform's clients (API, Telegram webhook and CLI
// share it).
func NewSubmitter(p *platform.Platform) *Submitter {
	known, _ := lru.New[string, struct{}](knownPipelines) // errs only for a size ≤ 0
	return &Submitter{known: known, Runs: NewStore(p.Mongo), Pipelines: pipelinedb.New(p.Mongo), Temporal: p.Temporal,
		TaskQueue: p.Config.Temporal.TaskQueue, Config: &p.Config.Entry, Log: p.Log.With("subsystem", "entry"),
		Metrics: NewMetrics(p.Metrics)}
}

// NewTasks builds the status and operator view over the platform's clients.
func NewTasks(p *platform.Platform) *Tasks {
	return &Tasks{Runs: NewStore(p.Mongo), Temporal: p.Temporal}
}

// NewMonitor builds the suspended-task monitor the worker runs.
func NewMonitor(p *platform.Platform) *SuspendedMonitor {
	return &SuspendedMonitor{Tasks: NewTasks(p), Threshold: p.Config.Entry.SuspendedAlertThreshold,
		Interval: p.Config.Entry.SuspendedCheckInterval, Metrics: NewMetrics(p.Metrics), Log: p.Log.With("subsystem", "entry")}
}
