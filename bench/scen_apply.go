package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

const (
	applyConc = 4
	// applyPipeline reads what an apply envelope provides (input_data.user_text and
	// history_chunks, see entry.InputData) and calls the fake assistant, like make dev's
	// entry_echo.
	applyPipeline  = "bench_entry_reply"
	applyProvider  = "bench_assistant"
	applyQuotaUnit = 10_000_000
)

// benchApply: POST /api/workflows/apply without waiting (authenticate, validate, idempotency
// check, start EntryTaskWorkflow, answer 202) against the bare start: client.ExecuteWorkflow of
// the same EntryTaskWorkflow with the options and input the intake would use
// (entrywf.StartOptions, intake.Submitter.Input), from the bench process.
//
// Two phases. The first sends n applies alone: throughput, commands per request to completion,
// and every task must complete (its pipeline run charges the entry quota account,
// ENTRY_USER_ID/ENTRY_FEATURE_ID). The second interleaves n more applies with n bare starts on the
// same clients, so both kinds meet the same machine and the same work already running on the
// worker; the row's latencies and the ratio (of p50) are that phase's, which is what the intake
// adds to a start. Run one after the other instead, the faster kind finishes before the work it
// started gets going, and the ratio measures the machine's load, not the intake.
func benchApply(ctx context.Context, r *run) []Result {
	res := Result{Scenario: "apply (no wait)", Unit: "requests"}
	if !r.hasRoute(ctx, "POST", "/api/workflows/apply") {
		res.Skipped = "POST /api/workflows/apply is not mounted"
		return []Result{res}
	}
	if err := seedApply(ctx, r); err != nil {
		res.Skipped = "seeding failed: " + err.Error()
		return []Result{res}
	}
	// 100 by default: every accepted apply runs a pipeline that charges the one quota document of
	// the entry account, and FerretDB serialises those writes (see quotaErrors).
	n := r.size(100, 20)
	res.N = n
	a := newApplier(r)
	// One apply first, run to its end outside the window: the API reads a pipeline it has not
	// seen yet once per process (intake's known pipelines), a warm-up, not a cost per request.
	if err := a.warmUp(ctx); err != nil {
		res.Skipped = "warm-up apply: " + err.Error()
		return []Result{res}
	}
	e := r.stack.cfg.Entry
	account := e.UserID + "/" + e.FeatureID
	// A cluster's logs hold earlier runs too: the row counts what this run added.
	quotaBefore := quotaErrors(r.app.logPaths, account)
	m := r.meter(ctx)
	start := time.Now()
	ids := make([]string, n)
	_, elapsed, failed, err := runLoad(ctx, n, applyConc, func(ctx context.Context, i int) error {
		var err error
		ids[i], err = a.apply(ctx, i)
		return err
	})
	if failed > 0 {
		res.Skipped = fmt.Sprintf("%d of %d requests failed: %v", failed, n, err)
		return []Result{res}
	}
	res.Throughput = float64(n) / elapsed.Seconds()
	st := awaitEntryTasks(ctx, r, ids)
	waited := time.Since(start)
	// Per request to completion: the entry workflow and the pipeline it runs (its child).
	m.charge(ctx, &res)

	b, mixed := a.interleaved(ctx, n)
	if b.err == nil {
		res.P50Ms, res.P99Ms = mixed.applies.percentile(0.50), mixed.applies.percentile(0.99)
	}
	b.apply(&res)
	if b.p50 > 0 {
		res.Ratio, res.RatioOf = res.P50Ms/b.p50, "p50 latency"
	}
	res.Notes = fmt.Sprintf("%d concurrent clients; answers 202 once the workflow is started. Afterwards (pipeline run, quota charged on the one account %s/%s): "+
		"%d/%d entry tasks completed, %d failed, %d still running %.0f s after the first request; %d pipeline-run attempts failed on that quota document "+
		"(FerretDB lock / contention / timeout) and were retried", applyConc, e.UserID, e.FeatureID, st.completed, n, st.failed, st.running, waited.Seconds(),
		quotaErrors(r.app.logPaths, account)-quotaBefore)
	if st.err != nil {
		res.Notes += "; first failure: " + short(st.err.Error())
	}
	res.Notes += fmt.Sprintf("; latencies and ratio from %d applies interleaved with %d bare starts (%d/%d of those tasks completed)",
		n, n, mixed.completed, 2*n)
	if mixed.err != nil {
		res.Notes += "; first failure: " + short(mixed.err.Error())
	}
	// The first phase's tasks: each is an entry workflow and its child pipeline.
	chargeTemporal(ctx, r, &res, latestRuns(ids))
	return []Result{res}
}

// applier sends the bench's apply requests and their bare twins; each call has its own keys.
type applier struct {
	r      *run
	sub    *intake.Submitter
	prefix string // keeps this run's idempotency keys apart from earlier runs'
}

func newApplier(r *run) *applier {
	return &applier{r: r, sub: intake.NewSubmitter(r.p, entrywf.NewClient(r.p.Temporal, r.p.Config.Temporal.TaskQueue)), prefix: "bench-" + suffix() + "-"}
}

// applyBody is the i-th apply request under prefix.
func applyBody(prefix string, i int) map[string]any {
	return map[string]any{"workflowId": applyPipeline, "userText": fmt.Sprint("bench ", i), "historyChunks": []string{"earlier"},
		"coreEnvelope": map[string]any{"metadata": map[string]any{"chat_id": "bench"}},
		"context":      map[string]any{"idempotencyKey": fmt.Sprint(prefix, i)}}
}

// apply sends the i-th request of this applier over HTTP and returns the task id.
func (a *applier) apply(ctx context.Context, i int) (string, error) {
	var acc struct {
		TaskID string `json:"taskId"`
	}
	_, err := call(ctx, "POST", a.r.app.apiURL+"/api/workflows/apply", a.r.adminKey, applyBody(a.prefix+"apply-", i), &acc)
	return acc.TaskID, err
}

// warmUp sends one apply (index -1, outside the run's) and waits for its task to complete.
func (a *applier) warmUp(ctx context.Context) error {
	id, err := a.apply(ctx, -1)
	if err != nil {
		return err
	}
	st := awaitEntryTasks(ctx, a.r, []string{id})
	if st.completed != 1 {
		return fmt.Errorf("task %s did not complete: %v", id, st.err)
	}
	return nil
}

// bareStart is a start prepared outside the timed call, so the baseline times ExecuteWorkflow alone.
type bareStart struct {
	id   string
	opts client.StartWorkflowOptions
	in   entry.WorkflowInput
}

// bareStartOf is the start the intake would make for the i-th bare request: the same envelope,
// options and input.
func (a *applier) bareStartOf(i int) (bareStart, error) {
	body, err := json.Marshal(applyBody(a.prefix+"bare-", i))
	if err != nil {
		return bareStart{}, err
	}
	req, err := entry.ParseApplyRequest(body)
	if err != nil {
		return bareStart{}, fmt.Errorf("bench apply request: %w", err)
	}
	e := a.r.stack.cfg.Entry
	env := req.Envelope(entry.Defaults{Channel: entry.ChannelHTTP, Source: "http-api", RetryMax: e.RetryMax,
		Now: time.Now(), Window: e.IdempotencyWindow})
	in := a.sub.Input(env)
	opts := entrywf.StartOptions(a.r.p.Config.Temporal.TaskQueue, in)
	return bareStart{id: env.TaskID, opts: opts, in: in}, nil
}

// mixedRun is the interleaved phase: each kind's latencies and how its tasks ended.
type mixedRun struct {
	applies latencies
	entryOutcome
}

// interleaved alternates n applies with n bare starts on the same clients (index 2j is apply j,
// 2j+1 bare start j), waits for all their tasks, and returns the bare starts as the baseline.
func (a *applier) interleaved(ctx context.Context, n int) (baseline, mixedRun) {
	b := baseline{name: "client.ExecuteWorkflow (same workflow, interleaved)"}
	starts := make([]bareStart, n)
	for j := range starts {
		var err error
		if starts[j], err = a.bareStartOf(j); err != nil {
			b.err = err
			return b, mixedRun{}
		}
	}
	ids := make([]string, 2*n)
	// Apply ids continue after the first phase's.
	lat, _, failed, err := runLoad(ctx, 2*n, applyConc, func(ctx context.Context, i int) error {
		var err error
		if i%2 == 0 {
			ids[i], err = a.apply(ctx, n+i/2)
		} else {
			st := starts[i/2]
			ids[i] = st.id
			_, err = a.r.p.Temporal.ExecuteWorkflow(ctx, st.opts, entry.WorkflowType, st.in)
		}
		return err
	})
	if failed > 0 {
		b.err = fmt.Errorf("%d of %d failed: %w", failed, 2*n, err)
		return b, mixedRun{}
	}
	var out mixedRun
	var bare latencies
	for i, d := range lat {
		if i%2 == 0 {
			out.applies = append(out.applies, d)
		} else {
			bare = append(bare, d)
		}
	}
	b.p50, b.p9 = bare.percentile(0.50), bare.percentile(0.99)
	out.entryOutcome = awaitEntryTasks(ctx, a.r, ids)
	return b, out
}

// seedApply registers the fake assistant as a provider, publishes the apply pipeline and grants
// the entry account quota.
func seedApply(ctx context.Context, r *run) error {
	store := pipelinedb.New(r.p.Mongo)
	if err := store.EnsureIndexes(ctx); err != nil {
		return err
	}
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: applyProvider, BaseURL: r.stack.assistantURL + telegram.AssistantPath}); err != nil {
		return err
	}
	def := &pipeline.Definition{Name: applyPipeline, Version: pipeline.DefaultVersion, Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "assistant_reply", Type: pipeline.StepSyncAPI, ProviderRef: applyProvider, Endpoint: "/reply",
		InputMapping:  map[string]any{"text": "${input_data.user_text}", "history": "${input_data.history_chunks}"},
		OutputMapping: map[string]string{"text": "$.reply"}, TimeoutSeconds: 30,
	}}}}
	lk, err := store.Lookup(ctx)
	if err != nil {
		return err
	}
	if err := pipeline.ValidateDefinition(def, lk); err != nil {
		return fmt.Errorf("%s: %w", applyPipeline, err)
	}
	if _, _, err := store.PublishSchema(ctx, def); err != nil && !errors.Is(err, pipeline.ErrSchemaConflict) {
		return fmt.Errorf("publish %s: %w", applyPipeline, err)
	}
	e := r.stack.cfg.Entry
	_, err = store.SetQuota(ctx, e.UserID, e.FeatureID, applyQuotaUnit)
	return err
}

// entryOutcome counts how the accepted entry tasks ended.
type entryOutcome struct {
	completed, failed, running int
	err                        error
}

// awaitEntryWait bounds the wait for the accepted entry tasks after the load.
const awaitEntryWait = 2 * time.Minute

// awaitEntryTasks waits up to awaitEntryWait for the entry workflows, then classifies each:
// completed, failed (closed any other way) or still running. Once the wait is over, the error of
// the cut-off long poll says nothing about the task (the SDK reports the deadline in more than one
// way, and every later poll fails at once), so the task's state is asked of Temporal instead.
func awaitEntryTasks(ctx context.Context, r *run, ids []string) entryOutcome {
	var out entryOutcome
	wctx, cancel := context.WithTimeout(ctx, awaitEntryWait)
	defer cancel()
	for _, id := range ids {
		var st entry.TaskStatus
		err := r.p.Temporal.GetWorkflow(wctx, id, "").Get(wctx, &st)
		if err != nil && wctx.Err() != nil {
			running, derr := stillRunning(ctx, r, id)
			if running {
				out.running++ // the wait is over; not finished yet
				continue
			}
			if err = derr; err == nil {
				// It finished meanwhile: read its result without waiting.
				gctx, gcancel := context.WithTimeout(ctx, 10*time.Second)
				err = r.p.Temporal.GetWorkflow(gctx, id, "").Get(gctx, &st)
				gcancel()
			}
		}
		switch {
		case err == nil && st.Status == entry.StatusCompleted:
			out.completed++
		case err == nil:
			out.failed++
			out.err = cmp.Or(out.err, fmt.Errorf("entry task %s ended %s: %s", id, st.Status, st.LastError))
		default:
			out.failed++
			out.err = cmp.Or(out.err, fmt.Errorf("entry task %s: %w", id, err))
		}
	}
	return out
}

// stillRunning says whether a workflow is still running, without waiting for it.
func stillRunning(ctx context.Context, r *run, id string) (bool, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := r.p.Temporal.DescribeWorkflowExecution(dctx, id, "")
	if err != nil {
		return false, fmt.Errorf("describe %s: %w", id, err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// quotaErrors counts the logged activity failures on one quota account ("consume quota
// user/feature: …") in the processes' logs; a log that cannot be read counts none.
func quotaErrors(logPaths []string, account string) int {
	n := 0
	for _, p := range logPaths {
		if b, err := os.ReadFile(p); err == nil {
			n += strings.Count(string(b), "consume quota "+account+":")
		}
	}
	return n
}
