package entry_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// Every intake feeds the same durable queue: HTTP and Telegram tasks are enqueued, the API process
// goes away, and the worker alone still processes both; /internal/tasks/stats showed them
// processing meanwhile.
func TestTasksRunWithTheAPIStopped(t *testing.T) {
	f := newFixture(t)
	f.vendor.delay.Store(4000)
	httpTask := f.apply(f.applyBody("chat-r1", "from http", nil), http.StatusAccepted)["taskId"].(string)
	r := f.webhook(telegramUpdate(9001, 4242, "from telegram"), tgSecret)
	if r.Status != http.StatusOK {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	tgTask := r.Map(t)["taskId"].(string)

	e2e.Eventually(t, 20*time.Second, "stats to show both tasks processing", func() bool {
		r := f.env.Do(http.MethodGet, "/internal/tasks/stats", f.env.AdminKey, nil)
		var st intake.Stats
		r.JSON(t, &st)
		return st.Counts[entry.StatusProcessing] >= 2 && st.Channels[entry.ChannelHTTP].Open >= 1 && st.Channels[entry.ChannelTelegram].Open >= 1
	})
	f.env.API.Close() // the API process is gone; only the worker runs

	tasks := &intake.Tasks{Runs: entrydb.New(f.env.Platform.Mongo), Workflows: entrywf.NewClient(f.env.Platform.Temporal, f.env.Config.Temporal.TaskQueue),
		Visibility: f.env.Platform.Temporal}
	for _, id := range []string{httpTask, tgTask} {
		e2e.Eventually(t, 30*time.Second, id+" to complete without the API", func() bool {
			st, err := tasks.Status(f.env.Context(), id)
			return err == nil && st.Status == entry.StatusCompleted
		})
	}
	st, _ := tasks.Status(f.env.Context(), httpTask)
	if st.Result["text"] != "echo: from http" || st.Result["history_len"] != 1.0 {
		t.Fatalf("http result: %+v", st)
	}
	e2e.Eventually(t, 10*time.Second, "the telegram reply", func() bool { return len(f.tg.MessagesTo("4242")) == 1 })
	if m := f.tg.MessagesTo("4242")[0]; m.Text != "echo: from telegram" || m.ReplyTo != 9008 {
		t.Fatalf("reply: %+v", m)
	}
	f.saveHistory(tgTask, "telegram_completed_reply")
}

// Idempotency: the same key twice is one task, one run, one workflow_runs document — also
// after the first run finished, and for keys the intake generates from a repeated click.
func TestSameKeyIsOneTask(t *testing.T) {
	f := newFixture(t)
	key := testenv.Unique("click-")
	body := f.applyBody("chat-r2", "hello", map[string]any{"idempotencyKey": key})
	first := f.apply(body, http.StatusAccepted)
	second := f.apply(body, http.StatusAccepted)
	id := first["taskId"].(string)
	if second["taskId"] != id || second["duplicate"] != true || first["duplicate"] != false {
		t.Fatalf("same key, different answers: %v / %v", first, second)
	}
	f.waitStatus(id, entry.StatusCompleted, 30*time.Second)
	f.saveHistory(id, "http_completed")

	third := f.apply(body, http.StatusOK) // after completion: the stored result, no new run
	if third["taskId"] != id || third["status"] != entry.StatusCompleted || third["from"] != entrydb.CollRuns {
		t.Fatalf("after completion: %v", third)
	}
	if n := f.runsWithKey(key); n != 1 {
		t.Fatalf("workflow_runs documents for the key: %d", n)
	}
	if n := f.vendor.calls.Load(); n != 1 {
		t.Fatalf("the pipeline ran %d times", n)
	}
	e2e.Eventually(t, 10*time.Second, "one execution with the key in visibility", func() bool {
		resp, err := f.env.Platform.Temporal.CountWorkflow(f.env.Context(), &workflowservice.CountWorkflowExecutionsRequest{
			Query: "TaskloomKey = '" + key + "'"})
		return err == nil && resp.GetCount() == 1
	})

	// No key: a double click in one window builds the same {channel}:{workflowId}:{chatId}:{ts}.
	a := f.apply(f.applyBody("chat-r2-click", "click", nil), http.StatusAccepted)
	b := f.apply(f.applyBody("chat-r2-click", "click", nil), http.StatusAccepted)
	if a["taskId"] != b["taskId"] || b["duplicate"] != true {
		t.Fatalf("double click made two tasks: %v / %v", a, b)
	}
}

// A key whose task ran so long ago that Temporal's retention has deleted the execution: the start
// is no longer refused, so the answer comes from workflow_runs, and the new execution finds the
// document and ends with the recorded status instead of running the pipeline again.
func TestSameKeyAfterRetentionIsNotRunAgain(t *testing.T) {
	f := newFixture(t)
	ctx := f.env.Context()
	key := testenv.Unique("old-")
	body := f.applyBody("chat-retention", "hello", map[string]any{"idempotencyKey": key})

	// What is left of a task once retention has deleted its execution: the workflow_runs document
	// its workflow wrote (accepted, then two status changes), and nothing in Temporal.
	id := entry.TaskID(key)
	runs := entrydb.New(f.env.Platform.Mongo)
	if _, err := runs.Accept(ctx, &entry.Run{TaskID: id, IdempotencyKey: key, WorkflowID: f.pipeline, Status: entry.StatusPending}); err != nil {
		t.Fatal(err)
	}
	for i, st := range []string{entry.StatusProcessing, entry.StatusCompleted} {
		u := entry.StatusUpdate{TaskID: id, Seq: i + 1, Status: st, Attempts: 1, Result: map[string]any{"text": "first"}, At: time.Now()}
		if err := runs.Record(ctx, u); err != nil {
			t.Fatal(err)
		}
	}

	again := f.apply(body, http.StatusOK)
	if again["taskId"] != id || again["status"] != entry.StatusCompleted || again["from"] != entrydb.CollRuns || again["duplicate"] != nil {
		t.Fatalf("apply after retention: %v", again)
	}
	// The start was not refused: an execution exists, and it ended with the recorded status.
	var st entry.TaskStatus
	if err := f.env.Platform.Temporal.GetWorkflow(ctx, id, "").Get(ctx, &st); err != nil {
		t.Fatalf("the new execution: %v", err)
	}
	if st.Status != entry.StatusCompleted || st.Result["text"] != "first" {
		t.Fatalf("the new execution ended %+v", st)
	}
	after, err := runs.Get(ctx, id)
	if err != nil || after.Seq != 2 || after.Status != entry.StatusCompleted {
		t.Fatalf("workflow_runs changed: %+v (%v)", after, err)
	}
	if n := f.vendor.calls.Load(); n != 0 {
		t.Fatalf("the pipeline ran %d times", n)
	}
}

// A wait that times out degrades to 202: waitForResult past waitTimeoutSeconds answers 202 with the taskId, and GET
// shows the completion later; a fast task answers 200 with its result.
func TestWaitTimeoutAnswers202ThenCompletes(t *testing.T) {
	f := newFixture(t)
	fast := f.apply(f.applyBody("chat-r3", "quick", map[string]any{"waitForResult": true, "waitTimeoutSeconds": 20}), http.StatusOK)
	if fast["status"] != entry.StatusCompleted || fast["result"].(map[string]any)["text"] != "echo: quick" {
		t.Fatalf("fast wait: %v", fast)
	}

	f.vendor.delay.Store(3000)
	slow := f.apply(f.applyBody("chat-r3-slow", "slow", map[string]any{"waitForResult": true, "waitTimeoutSeconds": 1}), http.StatusAccepted)
	id := slow["taskId"].(string)
	if slow["status"] == entry.StatusCompleted {
		t.Fatalf("answered completed before the vendor did: %v", slow)
	}
	st := f.waitStatus(id, entry.StatusCompleted, 30*time.Second)
	if st["result"].(map[string]any)["text"] != "echo: slow" {
		t.Fatalf("result: %v", st)
	}
}

// Suspended tasks wait for an operator: retries exhausted → suspended, listed in /internal/tasks/suspended; resume via
// the API runs it to completion; the same with the signal the temporal CLI sends; drop ends one.
func TestSuspendedTasksResume(t *testing.T) {
	f := newFixture(t)
	f.vendor.fail.Store(true)
	id := f.apply(f.applyBody("chat-r4", "needs an operator", nil), http.StatusAccepted)["taskId"].(string)
	st := f.waitStatus(id, entry.StatusSuspended, 30*time.Second)
	retry := st["retry"].(map[string]any)
	if retry["count"] != 1.0 || retry["max"] != 1.0 || st["attempts"] != 2.0 || st["lastError"] == "" {
		t.Fatalf("suspended status: %v", st)
	}
	e2e.Eventually(t, 10*time.Second, "the task in /internal/tasks/suspended", func() bool {
		r := f.env.Do(http.MethodGet, "/internal/tasks/suspended", f.env.AdminKey, nil)
		var list struct {
			Tasks []intake.SuspendedTask `json:"tasks"`
		}
		r.JSON(t, &list)
		for _, s := range list.Tasks {
			if s.TaskID == id {
				return s.Reason != "" && s.Attempts == 2 && s.Channel == entry.ChannelHTTP && s.Since != nil
			}
		}
		return false
	})
	if r := f.env.Do(http.MethodPost, "/internal/tasks/"+id+"/resume", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("resume without a key: %d", r.Status)
	}

	f.vendor.fail.Store(false)
	if r := f.env.Do(http.MethodPost, "/internal/tasks/"+id+"/resume", f.env.AdminKey, map[string]any{"reason": "vendor fixed"}); r.Status != http.StatusAccepted {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	done := f.waitStatus(id, entry.StatusCompleted, 30*time.Second)
	if done["result"].(map[string]any)["text"] != "echo: needs an operator" || done["retry"].(map[string]any)["count"] != 0.0 {
		t.Fatalf("after resume: %v", done)
	}
	if r := f.env.Do(http.MethodPost, "/internal/tasks/"+id+"/resume", f.env.AdminKey, nil); r.Status != http.StatusConflict {
		t.Fatalf("resume of a completed task: %d %s", r.Status, r.Body)
	}
	f.saveHistory(id, "http_suspended_resumed")

	// The temporal CLI path: `temporal workflow signal --workflow-id <taskId> --name resume`.
	f.vendor.fail.Store(true)
	cli := f.apply(f.applyBody("chat-r4-cli", "resumed from the CLI", nil), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(cli, entry.StatusSuspended, 30*time.Second)
	f.vendor.fail.Store(false)
	signalWithCLI(t, f, cli)
	f.waitStatus(cli, entry.StatusCompleted, 30*time.Second)

	// The same signal through the SDK client (what the CLI does over gRPC), with no payload.
	f.vendor.fail.Store(true)
	sdk := f.apply(f.applyBody("chat-r4-sdk", "resumed by signal", nil), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(sdk, entry.StatusSuspended, 30*time.Second)
	f.vendor.fail.Store(false)
	if err := f.env.Platform.Temporal.SignalWorkflow(f.env.Context(), sdk, "", entry.SignalResume, nil); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(sdk, entry.StatusCompleted, 30*time.Second)

	// Drop.
	f.vendor.fail.Store(true)
	dropped := f.apply(f.applyBody("chat-r4-drop", "not worth it", nil), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(dropped, entry.StatusSuspended, 30*time.Second)
	if r := f.env.Do(http.MethodPost, "/internal/tasks/"+dropped+"/drop", f.env.AdminKey, nil); r.Status != http.StatusAccepted {
		t.Fatalf("drop: %d %s", r.Status, r.Body)
	}
	f.waitStatus(dropped, entry.StatusDropped, 30*time.Second)
	f.saveHistory(dropped, "http_suspended_dropped")
	r := f.env.Do(http.MethodGet, "/internal/tasks/"+dropped, f.env.AdminKey, nil)
	if r.Status != http.StatusOK || r.Map(t)["run"].(map[string]any)["status"] != entry.StatusDropped {
		t.Fatalf("ops view of the dropped task: %d %s", r.Status, r.Body)
	}
}

// signalWithCLI runs ./.bin/temporal workflow signal against the test's dev server.
func signalWithCLI(t *testing.T, f *fixture, taskID string) {
	t.Helper()
	addr, _ := testenv.Temporal(t)
	bin := filepath.Join(testenv.RepoRoot(), ".bin", "temporal")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("temporal CLI: %v", err)
	}
	ctx, cancel := context.WithTimeout(f.env.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "workflow", "signal", "--address", addr, "--namespace", f.env.Config.Temporal.Namespace,
		"--workflow-id", taskID, "--name", entry.SignalResume).CombinedOutput()
	if err != nil {
		t.Fatalf("temporal workflow signal: %v\n%s", err, out)
	}
}

// A suspended task that no operator resumes within ENTRY_SUSPENDED_DROP_AFTER is dropped by its
// own workflow's timer: the reason is recorded and the stats count it.
func TestSuspendedTaskIsAutoDropped(t *testing.T) {
	f := newFixture(t, func(c *config.Config) { c.Entry.SuspendedDropAfter = 5 * time.Second })
	f.vendor.fail.Store(true)
	id := f.apply(f.applyBody("chat-autodrop", "nobody comes", nil), http.StatusAccepted)["taskId"].(string)
	susp := f.waitStatus(id, entry.StatusSuspended, 30*time.Second)
	st := f.waitStatus(id, entry.StatusDropped, 30*time.Second)
	reason, _ := st["dropReason"].(string)
	if st["autoDropped"] != true || !strings.HasPrefix(reason, entry.AutoDropReason) || !strings.Contains(reason, "5s") {
		t.Fatalf("auto-dropped status: %v", st)
	}
	since, err := time.Parse(time.RFC3339Nano, susp["suspendedAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	r := f.env.Do(http.MethodGet, "/internal/tasks/"+id, f.env.AdminKey, nil)
	run := r.Map(t)["run"].(map[string]any)
	done, err := time.Parse(time.RFC3339Nano, run["completedAt"].(string))
	if err != nil || done.Sub(since) < 5*time.Second {
		t.Fatalf("dropped at %v, suspended at %v: the drop came before its period (%v)", done, since, err)
	}
	e2e.Eventually(t, 10*time.Second, "the auto-drop in the stats", func() bool {
		var stats intake.Stats
		f.env.Do(http.MethodGet, "/internal/tasks/stats", f.env.AdminKey, nil).JSON(t, &stats)
		return stats.AutoDropped == 1 && stats.Counts[entry.StatusDropped] >= 1
	})
	f.saveHistory(id, "http_suspended_auto_dropped")

	// A resume before the period ends cancels the timer: the task runs to completion.
	kept := f.apply(f.applyBody("chat-autodrop-kept", "resumed in time", nil), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(kept, entry.StatusSuspended, 30*time.Second)
	f.vendor.fail.Store(false)
	if r := f.env.Do(http.MethodPost, "/internal/tasks/"+kept+"/resume", f.env.AdminKey, nil); r.Status != http.StatusAccepted {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	if st := f.waitStatus(kept, entry.StatusCompleted, 30*time.Second); st["autoDropped"] != nil {
		t.Fatalf("resumed task: %v", st)
	}
	f.saveHistory(kept, "http_suspended_resumed_before_auto_drop")
}

// An entry task whose execution is terminated from outside answers terminated, with who and why,
// within seconds, and workflow_runs follows (guarded write).
func TestTerminatedTaskShowsTerminated(t *testing.T) {
	f := newFixture(t)
	f.vendor.fail.Store(true)
	id := f.apply(f.applyBody("chat-terminated", "stuck", nil), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(id, entry.StatusSuspended, 30*time.Second)
	if err := f.env.Platform.Temporal.TerminateWorkflow(f.env.Context(), id, "", "operator: obsolete"); err != nil {
		t.Fatal(err)
	}
	st := f.waitStatus(id, entry.StatusTerminated, 10*time.Second)
	if reason, _ := st["lastError"].(string); !strings.HasPrefix(reason, "workflow terminated by ") || !strings.HasSuffix(reason, ": operator: obsolete") {
		t.Fatalf("terminated status: %v", st)
	}
	run, err := entrydb.New(f.env.Platform.Mongo).Get(f.env.Context(), id)
	if err != nil || run.Status != entry.StatusTerminated || run.CompletedAt == nil {
		t.Fatalf("workflow_runs after the terminate: %+v %v", run, err)
	}
}
