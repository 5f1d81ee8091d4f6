package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The baselines of the pipeline and apply scenarios: the least a Temporal-backed task can cost
// on the same dev server — one workflow that runs no-op activities, as many as the pipeline has
// steps. They are also the floor of the Temporal cost: a start and one action per activity.

// BenchNoopWorkflow runs NoopActivity once: 2 actions.
func BenchNoopWorkflow(ctx workflow.Context) error {
	return workflow.ExecuteActivity(noopActivityOptions(ctx), NoopActivity).Get(ctx, nil)
}

// BenchNoop3Workflow runs NoopActivity three times in a row, the fair baseline of a 3-step
// pipeline: 4 actions.
func BenchNoop3Workflow(ctx workflow.Context) error {
	ctx = noopActivityOptions(ctx)
	for range 3 {
		if err := workflow.ExecuteActivity(ctx, NoopActivity).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

func noopActivityOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
}

// NoopActivity does nothing; it is the activity round trip the baselines measure.
func NoopActivity(context.Context) error { return nil }

// baseline is a measured reference the scenario's rows are compared with.
type baseline struct {
	name          string
	tput, p50, p9 float64
	temporal      *TemporalCost
	// cpu is the CPU each process used per unit in the timed window (cpuUse.perUnit).
	cpu string
	err error
}

// apply copies the baseline into res and computes the throughput ratio.
func (b baseline) apply(res *Result) {
	if b.err != nil {
		res.Baseline = b.name + " failed: " + b.err.Error()
		return
	}
	res.Baseline, res.BaselineThroughput, res.BaselineP50Ms, res.BaselineP99Ms = b.name, b.tput, b.p50, b.p9
	res.BaselineTemporal = b.temporal
	if b.tput > 0 {
		res.Ratio, res.RatioOf = res.Throughput/b.tput, "throughput"
	}
}

// noopWorkflow is a bare baseline workflow and the name its rows give it.
type noopWorkflow struct {
	name string
	fn   any
}

var (
	noop1 = noopWorkflow{"workflow + 1 no-op activity", BenchNoopWorkflow}
	noop3 = noopWorkflow{"workflow + 3 no-op activities", BenchNoop3Workflow}
)

// noopBaseline runs n bare workflows wf at conc, start to completion, and counts their histories.
func noopBaseline(ctx context.Context, r *run, n, conc int, wf noopWorkflow) baseline {
	id := "bench-noop-" + suffix() + "-"
	ids := make([]execution, n)
	w := r.openWindow(ctx)
	lat, elapsed, failed, err := runLoad(ctx, n, conc, func(ctx context.Context, i int) error {
		ids[i].workflowID = fmt.Sprint(id, i)
		run, err := r.p.Temporal.ExecuteWorkflow(ctx, r.noopOptions(ids[i].workflowID), wf.fn)
		if err != nil {
			return err
		}
		return run.Get(ctx, nil)
	})
	cpu, serverDB := w.close(ctx, n)
	b := baseline{name: wf.name, cpu: cpu}
	if failed > 0 {
		b.err = fmt.Errorf("%d failed: %w", failed, err)
		return b
	}
	b.tput, b.p50, b.p9 = lat.fill(n, elapsed)
	if t := measureTemporal(ctx, r.p.Temporal, ids); t.err == nil && t.sampled > 0 {
		b.temporal = t.summary()
		b.temporal.ServerDBPerUnit = serverDB
	}
	return b
}
