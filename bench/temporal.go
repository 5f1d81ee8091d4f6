package main

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/actions"
)

// temporalSample bounds how many units' histories a scenario reads: reading every history of a
// thousand-task scenario would take longer than the scenario. The units are spread evenly over
// the run, so early and late (loaded) ones are both in the sample.
const temporalSample = 50

// closeWait bounds the wait for a row's sampled executions to close before their histories are
// counted (a history read while its execution runs misses its last commands); one still running
// after it is counted as far as it got.
const closeWait = 2 * time.Minute

// execution names one workflow run; runID "" is the latest run.
type execution struct{ workflowID, runID string }

// temporalCost is what the sampled units of a scenario cost on Temporal, per unit.
type temporalCost struct {
	perUnit actions.Cost // summed over the sample
	sampled int
	of      int
	err     error
}

// measureTemporal counts the histories of up to temporalSample of units (each unit's root
// execution with every child workflow it started, recursively) by the rules of internal/actions.
func measureTemporal(ctx context.Context, c client.Client, units []execution) temporalCost {
	out := temporalCost{of: len(units)}
	wctx, cancel := context.WithTimeout(ctx, closeWait)
	defer cancel()
	for _, u := range sample(units, temporalSample) {
		// A failed execution is counted like any other: its error is the scenario's to report.
		_ = c.GetWorkflow(wctx, u.workflowID, u.runID).Get(wctx, nil)
		cost, err := unitCost(ctx, c, u)
		if err != nil {
			out.err = err
			return out
		}
		out.perUnit = out.perUnit.Add(cost)
		out.sampled++
	}
	return out
}

// sample is up to n of units, evenly spaced.
func sample(units []execution, n int) []execution {
	if len(units) <= n {
		return units
	}
	out := make([]execution, n)
	for i := range out {
		out[i] = units[i*len(units)/n]
	}
	return out
}

// unitCost is the cost of one execution and of the child workflows it started: a child's start
// is billed in its parent's history, its own commands in its own.
func unitCost(ctx context.Context, c client.Client, e execution) (actions.Cost, error) {
	events, err := actions.Events(ctx, c, e.workflowID, e.runID)
	if err != nil {
		return actions.Cost{}, err
	}
	cost := actions.Count(events)
	for _, ev := range events {
		if ev.GetEventType() != enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED {
			continue
		}
		we := ev.GetChildWorkflowExecutionStartedEventAttributes().GetWorkflowExecution()
		child, err := unitCost(ctx, c, execution{we.GetWorkflowId(), we.GetRunId()})
		if err != nil {
			return actions.Cost{}, err
		}
		cost = cost.Add(child)
	}
	return cost, nil
}

// chargeTemporal sets res's Temporal events, actions and retries per unit from the sampled
// histories of units (one entry per unit of res).
func chargeTemporal(ctx context.Context, r *run, res *Result, units []execution) {
	t := measureTemporal(ctx, r.p.Temporal, units)
	if t.err != nil || t.sampled == 0 {
		res.Notes += fmt.Sprintf("; Temporal cost unavailable: %v (%d executions)", t.err, len(units))
		return
	}
	res.Temporal = t.summary()
}

// summary is the per-unit figures of the sample.
func (t temporalCost) summary() *TemporalCost {
	n := float64(t.sampled)
	return &TemporalCost{EventsPerUnit: float64(t.perUnit.Events) / n, ActionsPerUnit: float64(t.perUnit.Actions) / n,
		RetriesPerUnit: float64(t.perUnit.Retries) / n, Sampled: t.sampled, Of: t.of}
}

// latestRuns is the latest run of each workflow id.
func latestRuns(ids []string) []execution {
	out := make([]execution, len(ids))
	for i, id := range ids {
		out[i] = execution{workflowID: id}
	}
	return out
}
