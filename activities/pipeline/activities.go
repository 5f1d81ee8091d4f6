// Package pipeline holds the side effects of PipelineWorkflow and ProviderHealthWorkflow:
// vendor HTTP calls, SCF invocations and the Mongo bookkeeping. Each activity is idempotent;
// its doc comment names the guard. The activities reach Mongo, the vendors and Prometheus only
// through the interfaces in clients.go, so the workflows can name them by method value without
// linking a client; the worker wires internal/pipeline/pipelinedb, vendorhttp and pipelineprom.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// Activities holds the clients the pipeline activities need.
type Activities struct {
	Store   Store
	Vendors Vendors
	// Env holds the allow-listed environment variables `${env.X}` may read.
	Env map[string]string
	// BackendURL is this API's base URL as SCF functions reach it (`${backend_url}`).
	BackendURL string
	// HealthWindow is how far back recent calls count for error_rate and avg_response_time.
	HealthWindow time.Duration
	// Breaker is the circuit breaker's policy (breaker.go); a zero Threshold turns it off.
	Breaker pipeline.BreakerPolicy
	Log     *slog.Logger
	Metrics Metrics
	// RedriveWindow is how long after its failure a task may be redriven (PIPELINE_REDRIVE_WINDOW).
	RedriveWindow time.Duration
	// Redriver starts the redrives of a bulk redrive.
	Redriver Redriver

	providers providerCache[*pipeline.Provider]
	// healths caches provider_health documents (nil: none) for the circuit breaker (breaker.go)
	// and the provider choice.
	healths providerCache[*pipeline.Health]
	// schemas keeps the published pipeline versions read (name@version → *SchemaRecord): a
	// published version never changes.
	schemas sync.Map
}

// AllowedEnv reads the allow-listed variables that are set.
func AllowedEnv(allow []string) map[string]string {
	env := make(map[string]string, len(allow))
	for _, name := range allow {
		if v, ok := os.LookupEnv(name); ok {
			env[name] = v
		}
	}
	return env
}

// PipelineFinishStep records a step's final status. Guard: only pending/processing steps change.
func (a *Activities) PipelineFinishStep(ctx context.Context, req pipeline.FinishStepRequest) error {
	return a.Store.FinishStep(ctx, req.TaskID, req.StepIndex, req.Status, req.ProviderRef, req.Output, req.ErrorMessage)
}

// PipelineFinishTask records a task's end (pipeline.EndTask, which names the guards) for the
// workflow, on every path where the last sync step's activity did not.
func (a *Activities) PipelineFinishTask(ctx context.Context, req pipeline.FinishTaskRequest) error {
	return pipeline.EndTask(ctx, a.Store, a.Metrics, req)
}

// PipelineRefundQuota returns the task's unit (pipeline.RefundUnit, which names the guard).
func (a *Activities) PipelineRefundQuota(ctx context.Context, req pipeline.RefundRequest) (bool, error) {
	return pipeline.RefundUnit(ctx, a.Store, a.Metrics, req)
}

// PipelineChooseProviders orders a step's candidates by health: `up` ones in the schema's order,
// then `degraded` ones; `down` and unknown ones are skipped, and so are those their circuit
// breaker holds (unless pinned). When that leaves none, WaitUntil says when the earliest held one
// may be tried again. Read-only: the provider_health documents are read through the worker's
// cache (providerCacheTTL), as the circuit breaker reads them; a call to a provider that went down
// since fails over to the next candidate like any failed call.
func (a *Activities) PipelineChooseProviders(ctx context.Context, req pipeline.ChooseRequest) (*pipeline.ChooseResult, error) {
	return a.choose(ctx, req.Candidates)
}

// healthOf returns the candidates' provider_health documents, from the cache while fresh unless
// reread; the others in one read, which refreshes the cache (a provider without a document is
// cached as nil).
func (a *Activities) healthOf(ctx context.Context, refs []string, reread bool) (map[string]pipeline.Health, error) {
	out := make(map[string]pipeline.Health, len(refs))
	var missing []string
	for _, ref := range refs {
		h, ok := a.healths.fresh(ref)
		switch {
		case !ok || reread:
			missing = append(missing, ref)
		case h != nil:
			out[ref] = *h
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	read, err := a.Store.GetHealth(ctx, missing)
	if err != nil {
		return nil, err
	}
	for _, ref := range missing {
		h, ok := read[ref]
		if !ok {
			a.healths.put(ref, nil)
			continue
		}
		out[ref] = h
		a.healths.put(ref, &h)
	}
	return out, nil
}

// choose ranks the candidates on the cached view; when that leaves none usable it reads their
// documents again before saying so, so an operator's pin of a moment ago (PUT
// /api/v1/providers/{ref}/health) is never refused on a view up to providerCacheTTL old. The
// happy path stays without a read.
func (a *Activities) choose(ctx context.Context, candidates []string) (*pipeline.ChooseResult, error) {
	health, err := a.healthOf(ctx, candidates, false)
	if err != nil {
		return nil, err
	}
	if res := a.rank(candidates, health); len(res.Usable) > 0 {
		return res, nil
	}
	if health, err = a.healthOf(ctx, candidates, true); err != nil {
		return nil, err
	}
	return a.rank(candidates, health), nil
}

// rank orders candidates by their health documents (see PipelineChooseProviders).
func (a *Activities) rank(candidates []string, health map[string]pipeline.Health) *pipeline.ChooseResult {
	now := time.Now().UTC()
	res := &pipeline.ChooseResult{}
	var degraded []string
	var wait time.Time
	for _, ref := range candidates {
		h, ok := health[ref]
		if ok {
			a.Metrics.CircuitState(ref, h.Circuit.Current())
		}
		adm, until := a.Breaker.Admit(h, now)
		switch {
		case !ok:
			res.Skipped = append(res.Skipped, ref+" (unknown)")
		case h.Status != pipeline.HealthUp && h.Status != pipeline.HealthDegraded:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s (%s)", ref, h.Status))
		case adm == pipeline.AdmitHold:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s (circuit %s until %s)", ref, h.Circuit.Current(), until.Format(time.RFC3339)))
			if wait.IsZero() || until.Before(wait) {
				wait = until
			}
		case h.Status == pipeline.HealthUp:
			res.Usable = append(res.Usable, ref)
		default:
			degraded = append(degraded, ref)
		}
	}
	res.Usable = append(res.Usable, degraded...)
	if len(res.Usable) == 0 {
		res.WaitUntil = wait
	}
	return res
}

func (a *Activities) scope(req pipeline.CallRequest) pipeline.Scope {
	return pipeline.Scope{TaskID: req.TaskID, UserID: req.UserID, StepIndex: req.StepIndex, InputData: req.InputData,
		StepOutputs: req.StepOutputs, BackendURL: a.BackendURL, Env: a.Env}
}

func (a *Activities) renderInput(req pipeline.CallRequest) (map[string]any, error) {
	in, err := pipeline.RenderMapping(req.Step.InputMapping, a.scope(req))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("input_mapping: "+err.Error(), pipeline.ErrTypeRender, nil)
	}
	return in, nil
}

func (a *Activities) provider(ctx context.Context, ref string) (*pipeline.Provider, error) {
	p, _, err := a.providers.get(ctx, ref, a.Store.GetProvider)
	if isNotFound(err) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("provider %q is not registered", ref), pipeline.ErrTypeConfig, nil)
	}
	return p, err
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, pipeline.ErrNotFound) }
