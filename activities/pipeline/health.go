package pipeline

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// Health-check thresholds. Hysteresis: a provider goes down after two failed probes in a row (or
// a high error rate) but comes back only after two good probes in a row with a low error rate, so
// one lucky probe does not send traffic back to a sick vendor.
const (
	failuresToDown       = 2
	successesToUp        = 2
	minCallsForRate      = 5
	downErrorRate        = 50.0 // percent
	degradedErrorRate    = 20.0 // percent
	degradedAvgMS        = 5000
	maxCallsPerCheck     = 1000
	callRetentionWindows = 12 // provider_calls older than 12 health windows are pruned
)

// PipelineCheckProviderHealth probes every provider's health_url, aggregates its recent calls and
// updates provider_health (and refreshes the circuit breaker gauge of each provider, which the
// calls themselves drive). Idempotent in effect: it writes the current measurement; a pinned
// (hand-set) status is never overwritten.
func (a *Activities) PipelineCheckProviderHealth(ctx context.Context) (*pipeline.HealthReport, error) {
	providers, err := a.Store.ListProviders(ctx)
	if err != nil {
		return nil, err
	}
	refs := make([]string, len(providers))
	for i, p := range providers {
		refs[i] = p.Ref
	}
	current, err := a.Store.GetHealth(ctx, refs)
	if err != nil {
		return nil, err
	}
	window := a.HealthWindow
	if window <= 0 {
		window = 5 * time.Minute
	}
	now := time.Now().UTC()
	rep := &pipeline.HealthReport{}
	for _, p := range providers {
		activity.RecordHeartbeat(ctx, p.Ref)
		stats, err := a.Store.RecentCalls(ctx, p.Ref, now.Add(-window), maxCallsPerCheck)
		if err != nil {
			return nil, err
		}
		h := current[p.Ref]
		h.ProviderRef = p.Ref
		a.Metrics.CircuitState(p.Ref, h.Circuit.Current())
		if h.Status == "" {
			h.Status = pipeline.HealthUp
		}
		next := Assess(h, a.probe(ctx, p.HealthURL), stats)
		next.LastCheckAt = now
		if err := a.Store.SaveHealth(ctx, next); err != nil {
			return nil, err
		}
		rep.Checked++
		if !h.Pinned && next.Status != h.Status {
			rep.Changed = append(rep.Changed, fmt.Sprintf("%s: %s → %s", p.Ref, h.Status, next.Status))
		}
	}
	if err := a.Store.PruneCalls(ctx, now.Add(-callRetentionWindows*window)); err != nil {
		return nil, err
	}
	return rep, nil
}

// probeResult is the outcome of one health_url probe; noProbe when the provider has none.
type probeResult int

const (
	noProbe probeResult = iota
	probeOK
	probeFailed
)

func (a *Activities) probe(ctx context.Context, healthURL string) probeResult {
	switch {
	case healthURL == "":
		return noProbe
	case a.Vendors.Probe(ctx, healthURL).OK:
		return probeOK
	}
	return probeFailed
}

// Assess computes the next health from the previous one, a probe and recent call statistics.
func Assess(prev pipeline.Health, probe probeResult, stats pipeline.CallStats) pipeline.Health {
	h := prev
	h.AvgResponseTime = stats.AvgMS
	h.ErrorRate = 0
	if stats.Calls > 0 {
		h.ErrorRate = float64(int(float64(stats.Failures)*10000/float64(stats.Calls))) / 100 // two decimals, like DECIMAL(5,2)
	}
	switch probe {
	case probeOK:
		h.ConsecutiveSuccesses++
		h.ConsecutiveFailures = 0
	case probeFailed:
		h.ConsecutiveFailures++
		h.ConsecutiveSuccesses = 0
	}
	rated := stats.Calls >= minCallsForRate
	sick := h.ConsecutiveFailures >= failuresToDown || (rated && h.ErrorRate >= downErrorRate)
	slow := (rated && h.ErrorRate >= degradedErrorRate) || h.AvgResponseTime >= degradedAvgMS
	switch {
	case sick:
		h.Status = pipeline.HealthDown
	case prev.Status == pipeline.HealthDown:
		recovered := (probe == noProbe || h.ConsecutiveSuccesses >= successesToUp) && !(rated && h.ErrorRate >= degradedErrorRate)
		if recovered {
			h.Status = pipeline.HealthUp
			if slow {
				h.Status = pipeline.HealthDegraded
			}
		}
	case slow:
		h.Status = pipeline.HealthDegraded
	default:
		h.Status = pipeline.HealthUp
	}
	return h
}
