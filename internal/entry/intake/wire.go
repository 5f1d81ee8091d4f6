package intake

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/entryprom"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/platform"
)

// NewSubmitter builds the submitter over the platform's clients and wf, the Temporal face of
// EntryTaskWorkflow (API, Telegram webhook and CLI share it).
func NewSubmitter(p *platform.Platform, wf Workflows) *Submitter {
	known, _ := lru.New[string, struct{}](knownPipelines) // errs only for a size ≤ 0
	return &Submitter{known: known, Runs: entrydb.New(p.Mongo), Pipelines: pipelinedb.New(p.Mongo), Workflows: wf,
		Config: &p.Config.Entry, Log: p.Log.With("subsystem", "entry"), Metrics: entryprom.New(p.Metrics)}
}

// NewTasks builds the status and operator view over the platform's clients and wf (visibility
// is read with the platform's Temporal client).
func NewTasks(p *platform.Platform, wf Workflows) *Tasks {
	return &Tasks{Runs: entrydb.New(p.Mongo), Workflows: wf, Visibility: p.Temporal}
}

// NewMonitor builds the suspended-task monitor the worker runs.
func NewMonitor(p *platform.Platform, wf Workflows) *SuspendedMonitor {
	return &SuspendedMonitor{Tasks: NewTasks(p, wf), Threshold: p.Config.Entry.SuspendedAlertThreshold,
		Interval: p.Config.Entry.SuspendedCheckInterval, Metrics: entryprom.New(p.Metrics), Log: p.Log.With("subsystem", "entry")}
}
