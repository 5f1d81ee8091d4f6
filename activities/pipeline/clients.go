package pipeline

import (
	"context"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// Store is the pipelines' Mongo bookkeeping the activities do (pipelinedb.Store). Each write is
// guarded by the state it expects; the activities' idempotency rests on those guards.
type Store interface {
	GetSchema(ctx context.Context, name, version string) (*pipeline.SchemaRecord, error)

	InsertTask(ctx context.Context, t *pipeline.Task) (existing *pipeline.Task, err error)
	DeleteTask(ctx context.Context, id, runID string) error
	FinishTask(ctx context.Context, id, status, reason string) error
	MarkRefunded(ctx context.Context, id string) error
	GetTask(ctx context.Context, id string) (*pipeline.Task, error)
	StartRedrive(ctx context.Context, taskID string, r pipeline.Redrive) (ok bool, err error)
	RedriveBatch(ctx context.Context, f pipeline.RedriveFilter, redriveID, after string, limit int64) ([]string, error)

	GetStep(ctx context.Context, taskID string, index int) (*pipeline.StepRecord, error)
	ListSteps(ctx context.Context, taskID string) ([]pipeline.StepRecord, error)
	ResetSteps(ctx context.Context, taskID string, from int) error
	StartStep(ctx context.Context, taskID string, index int, providerRef string, input map[string]any) error
	SetVendorTask(ctx context.Context, taskID string, index int, providerRef, vendorTaskID string) error
	AwaitCallback(ctx context.Context, taskID string, index int) error
	MarkInvoked(ctx context.Context, taskID string, index int) error
	FinishStep(ctx context.Context, taskID string, index int, status, providerRef string, output map[string]any, errMsg string) error
	RecordStep(ctx context.Context, r pipeline.StepResult) error

	ConsumeQuota(ctx context.Context, userID, featureID, taskID string) error
	RefundQuota(ctx context.Context, userID, featureID, taskID string) (refunded bool, err error)
	SettleQuota(ctx context.Context, userID, featureID, taskID string) error

	GetProvider(ctx context.Context, ref string) (*pipeline.Provider, error)
	ListProviders(ctx context.Context) ([]pipeline.Provider, error)
	GetFunction(ctx context.Context, name string) (*pipeline.Function, error)
	GetHealth(ctx context.Context, refs []string) (map[string]pipeline.Health, error)
	SaveHealth(ctx context.Context, h pipeline.Health) error
	SwapCircuit(ctx context.Context, ref string, prev int64, next pipeline.Circuit) (pipeline.Circuit, bool, error)
	RecordCall(ctx context.Context, c pipeline.ProviderCall) error
	RecentCalls(ctx context.Context, ref string, since time.Time, limit int64) (pipeline.CallStats, error)
	PruneCalls(ctx context.Context, before time.Time) error
}

// Vendors sends the steps' HTTP requests (vendorhttp.Client): each call is recorded for the
// health check, and a failure comes back as the activity error the workflow decides on: its type
// names the failure's pipeline.ErrorClass, and a vendor's Retry-After is its next retry delay.
type Vendors interface {
	// Post sends body as JSON to url on p's behalf, with idemKey as Idempotency-Key, and returns
	// the decoded JSON answer.
	Post(ctx context.Context, p *pipeline.Provider, url string, body any, idemKey string) (any, error)
	// Get fetches url on p's behalf and returns the decoded JSON answer.
	Get(ctx context.Context, p *pipeline.Provider, url string) (any, error)
	// Probe GETs a provider's health_url: whether it answered 2xx in time, and the Retry-After
	// of a 429/503 answer.
	Probe(ctx context.Context, healthURL string) pipeline.ProbeResult
}

// Redriver asks for one task's redrive (workflows/pipeline's Client): a new run of the task's
// workflow that continues it from its failed step. created is false when redriveID redrove the
// task before. Refusals wrap pipeline.ErrRedriveConflict, pipeline.ErrRedriveExpired or
// pipeline.ErrQuotaExhausted.
type Redriver interface {
	RedriveTask(ctx context.Context, task *pipeline.Task, redriveID, bulkID string, window time.Duration) (created bool, err error)
}

// Metrics counts what the activities finish (pipelineprom.Metrics).
type Metrics interface {
	TaskFinished(status string)
	QuotaRefunded()
	// CircuitState exports a provider's circuit breaker state as this worker last saw it.
	CircuitState(provider, state string)
}
