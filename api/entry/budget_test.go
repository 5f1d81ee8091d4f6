package entry_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	entryact "github.com/taskloom/taskloom/activities/entry"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
)

// Command budgets of an entry apply (docs/entry.md "How entry tasks map onto pipelines"), not counting
// the pipeline lookup (pipeline_schemas, once per pipeline per API process) nor authentication
// (api_keys, the same on every route):
//   - applyBudget, the intake: the request's read of the key's workflow_runs document plus the
//     workflow's first write, which records the task already processing its first attempt.
//   - entryRunBudget, the entry task to completion, the pipeline it runs aside: applyBudget plus
//     the completed status. It is the floor: the read is what answers a key whose task ran
//     before Temporal's retention forgot it, the first write is what makes the task findable in
//     workflow_runs while it runs (bulk operations, the status when no worker answers), and the
//     last is the record that outlives the execution. Everything between (the pipeline lookup,
//     the processing status) rides on them or on the child's own admission.
const (
	applyBudget    = 2
	entryRunBudget = 3
)

// TestCommandBudgets counts the MongoDB commands of an apply: the API's, with e2e's per-request
// tally, and the entry workflow's own writes (EntryStartRun, then EntryRecordStatus of the
// completion), the same calls the worker made, run here on a tallied context. A first apply and
// a repeat both stay within applyBudget, the whole entry task within entryRunBudget. The child
// pipeline's commands are its own budget (activities/pipeline TestCommandBudgets); the bench's
// apply scenario measures both together, end to end.
func TestCommandBudgets(t *testing.T) {
	f := newFixture(t)
	key := testenv.Unique("budget-")
	body := f.applyBody("chat-budget", "count me", map[string]any{"idempotencyKey": key})

	r, api := f.env.DoCounted(http.MethodPost, "/api/workflows/apply", f.env.AdminKey, body)
	if r.Status != http.StatusAccepted {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	id := r.Map(t)["taskId"].(string)
	own, lookup := split(api)
	if lookup > 1 {
		t.Errorf("pipeline lookup: %d commands (%s)", lookup, api)
	}
	f.waitStatus(id, entry.StatusCompleted, 30*time.Second)

	// The workflow's writes, the same calls the worker made, on a tallied context, for a task of
	// the same shape under a fresh key (the key above has run).
	ctx, acts := mongox.WithTally(f.env.Context())
	a := &entryact.Activities{Runs: entrydb.New(f.env.Platform.Mongo)}
	text, history := "count me", []string{}
	req := &entry.ApplyRequest{WorkflowID: f.pipeline, UserText: &text, HistoryChunks: &history, IdempotencyKey: testenv.Unique("budget-"),
		CoreEnvelope: map[string]any{"metadata": map[string]any{"chat_id": "chat-budget"}}}
	env := req.Envelope(entry.Defaults{Channel: entry.ChannelHTTP, Now: time.Now(), Window: time.Hour})
	first := entry.StatusUpdate{TaskID: env.TaskID, Seq: 1, Status: entry.StatusProcessing, Attempts: 1, Retry: env.Retry,
		PipelineTaskID: entry.PipelineTaskID(env.TaskID, "run", time.Now(), 1), At: time.Now()}
	if _, err := a.EntryStartRun(ctx, entry.StartRequest{Envelope: env, First: first}); err != nil {
		t.Fatal(err)
	}
	if got := own + acts.Total(); got > applyBudget {
		t.Errorf("apply: %d MongoDB commands (API %s; workflow record %s), budget %d", got, api, acts, applyBudget)
	}
	done := first
	done.Seq, done.Status, done.Result = 2, entry.StatusCompleted, map[string]any{"text": "echo: count me"}
	if err := a.EntryRecordStatus(ctx, done); err != nil {
		t.Fatal(err)
	}
	if got := own + acts.Total(); got > entryRunBudget {
		t.Errorf("entry task: %d MongoDB commands (API %s; workflow %s), budget %d", got, api, acts, entryRunBudget)
	}
	t.Logf("entry task: API %s; workflow %s", api, acts)

	r, api = f.env.DoCounted(http.MethodPost, "/api/workflows/apply", f.env.AdminKey, body)
	if r.Status != http.StatusOK || r.Map(t)["taskId"] != id {
		t.Fatalf("repeat: %d %s", r.Status, r.Body)
	}
	// A repeat after completion answers the stored status from the apply's one read.
	if own, _ := split(api); own > applyBudget {
		t.Errorf("repeated apply: %s, budget %d", api, applyBudget)
	}
}

// split separates a request's commands into the intake's own and the pipeline lookup's,
// leaving out authentication.
func split(t *mongox.Tally) (own, lookup int) {
	for _, c := range t.Commands() {
		switch c.Collection {
		case pipelinedb.CollSchemas:
			lookup++
		case "api_keys": // authentication, not the intake
		default:
			own++
		}
	}
	return own, lookup
}

// TestConcurrentSameKeyIsOneTask: racing intakes of one key (no document yet, so every one of
// them tries to start the workflow) end with one task, one created answer and one document.
func TestConcurrentSameKeyIsOneTask(t *testing.T) {
	f := newFixture(t)
	key := testenv.Unique("race-")
	body := f.applyBody("chat-race", "once", map[string]any{"idempotencyKey": key})
	const n = 8
	answers := make(chan map[string]any, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.env.Do(http.MethodPost, "/api/workflows/apply", f.env.AdminKey, body)
			if r.Status != http.StatusAccepted && r.Status != http.StatusOK {
				t.Errorf("apply: %d %s", r.Status, r.Body)
				return
			}
			answers <- r.Map(t)
		}()
	}
	wg.Wait()
	close(answers)
	ids, created := map[any]bool{}, 0
	for a := range answers {
		ids[a["taskId"]] = true
		if a["duplicate"] == false {
			created++
		}
	}
	if len(ids) != 1 || created != 1 {
		t.Fatalf("%d task ids, %d created answers", len(ids), created)
	}
	for id := range ids {
		f.waitStatus(id.(string), entry.StatusCompleted, 30*time.Second)
	}
	if got := f.runsWithKey(key); got != 1 {
		t.Fatalf("workflow_runs documents: %d", got)
	}
	if got := f.vendor.calls.Load(); got != 1 {
		t.Fatalf("the pipeline ran %d times", got)
	}
}
