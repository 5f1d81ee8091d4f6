package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/taskloom/taskloom/internal/entry"
	"go.temporal.io/api/enums/v1"

	tgfake "github.com/taskloom/taskloom/internal/fakes/telegram"
	"github.com/taskloom/taskloom/internal/pipeline"
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

// benchApply: POST /api/workflows/apply without waiting (validate, idempotency record, start
// EntryTaskWorkflow, answer 202) against calling client.ExecuteWorkflow directly on the same
// dev server. Both are latency rows; the ratio is of p50. Afterwards every accepted task must
// complete: its pipeline runs on the entry quota account (ENTRY_USER_ID/ENTRY_FEATURE_ID).
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
	prefix := "bench-apply-" + suffix() + "-"
	taskIDs := make([]string, n)
	m := r.meter(ctx)
	start := time.Now()
	lat, elapsed, failed, err := runLoad(ctx, n, applyConc, func(ctx context.Context, i int) error {
		body := map[string]any{"workflowId": applyPipeline, "userText": fmt.Sprint("bench ", i), "historyChunks": []string{"earlier"},
			"coreEnvelope": map[string]any{"metadata": map[string]any{"chat_id": "bench"}},
			"context":      map[string]any{"idempotencyKey": fmt.Sprint(prefix, i)}}
		var acc struct {
			TaskID string `json:"taskId"`
		}
		_, err := call(ctx, "POST", r.app.apiURL+"/api/workflows/apply", r.adminKey, body, &acc)
		taskIDs[i] = acc.TaskID
		return err
	})
	if failed > 0 {
		res.Skipped = fmt.Sprintf("%d of %d requests failed: %v", failed, n, err)
		return []Result{res}
	}
	res.Throughput, res.P50Ms, res.P99Ms = lat.fill(n, elapsed)
	st := awaitEntryTasks(ctx, r, taskIDs)
	waited := time.Since(start)
	// Per request to completion: the entry workflow and the pipeline it runs.
	m.charge(ctx, &res)

	id := "bench-start-" + suffix() + "-"
	blat, belapsed, bfailed, err := runLoad(ctx, n, applyConc, func(ctx context.Context, i int) error {
		_, err := r.p.Temporal.ExecuteWorkflow(ctx, r.noopOptions(fmt.Sprint(id, i)), BenchNoopWorkflow)
		return err
	})
	b := baseline{name: "client.ExecuteWorkflow"}
	if bfailed > 0 {
		b.err = fmt.Errorf("%d failed: %w", bfailed, err)
	} else {
		b.tput, b.p50, b.p9 = blat.fill(n, belapsed)
	}
	b.apply(&res)
	if b.p50 > 0 {
		res.Ratio, res.RatioOf = res.P50Ms/b.p50, "p50 latency"
	}
	e := r.stack.cfg.Entry
	res.Notes = fmt.Sprintf("%d concurrent clients; answers 202 once the workflow is started. Afterwards (pipeline run, quota charged on the one account %s/%s): "+
		"%d/%d entry tasks completed, %d failed, %d still running %.0f s after the first request; %d pipeline-run attempts failed on that quota document "+
		"(FerretDB lock / contention / timeout) and were retried", applyConc, e.UserID, e.FeatureID, st.completed, n, st.failed, st.running, waited.Seconds(),
		quotaErrors(r.app.logPath, e.UserID+"/"+e.FeatureID))
	if st.err != nil {
		res.Notes += "; first failure: " + short(st.err.Error())
	}
	return []Result{res}
}

// seedApply registers the fake assistant as a provider, publishes the apply pipeline and grants
// the entry account quota.
func seedApply(ctx context.Context, r *run) error {
	store := pipeline.NewStore(r.p.Mongo)
	if err := store.EnsureIndexes(ctx); err != nil {
		return err
	}
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: applyProvider, BaseURL: r.stack.assistant.URL + tgfake.AssistantPath}); err != nil {
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
// user/feature: …") in the processes' log.
func quotaErrors(logPath, account string) int {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return -1
	}
	return strings.Count(string(b), "consume quota "+account+":")
}
