package entry_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// bulkAnswer is the JSON of a bulk dry run, start or progress.
type bulkAnswer struct {
	Count    int64               `json:"count"`
	Sample   []string            `json:"sample"`
	BulkID   string              `json:"bulkId"`
	Started  bool                `json:"started"`
	Total    int64               `json:"total"`
	Applied  int                 `json:"applied"`
	Skipped  int                 `json:"skipped"`
	Errors   int                 `json:"errors"`
	Finished bool                `json:"finished"`
	Outcomes []entry.BulkOutcome `json:"outcomes"`
}

// bulk posts a bulk resume or drop with an optional Idempotency-Key.
func (f *fixture) bulk(op, key string, body map[string]any, want int) bulkAnswer {
	f.t.Helper()
	hdr := http.Header{}
	if key != "" {
		hdr.Set("Idempotency-Key", key)
	}
	r := f.env.DoHeader(http.MethodPost, "/internal/tasks/"+op, f.env.AdminKey, body, hdr)
	if r.Status != want {
		f.t.Fatalf("bulk %s: want %d, got %d %s", op, want, r.Status, r.Body)
	}
	var a bulkAnswer
	r.JSON(f.t, &a)
	return a
}

// waitBulk polls the operation's progress until it finished, then records its history.
func (f *fixture) waitBulk(op, bulkID, history string) bulkAnswer {
	f.t.Helper()
	var a bulkAnswer
	e2e.Eventually(f.t, 30*time.Second, "bulk "+op+" to finish", func() bool {
		r := f.env.Do(http.MethodGet, "/internal/tasks/"+op+"/"+bulkID, f.env.AdminKey, nil)
		if r.Status != http.StatusOK {
			f.t.Fatalf("progress: %d %s", r.Status, r.Body)
		}
		r.JSON(f.t, &a)
		return a.Finished
	})
	ctx, cancel := context.WithTimeout(f.env.Context(), 10*time.Second)
	defer cancel()
	if err := f.env.Platform.Temporal.GetWorkflow(ctx, entrywf.BulkOps[op].WorkflowID(bulkID), "").Get(ctx, nil); err != nil {
		f.t.Fatal(err)
	}
	f.saveHistory(entrywf.BulkOps[op].WorkflowID(bulkID), history)
	return a
}

func sorted(s ...string) []string { sort.Strings(s); return s }

// Bulk resume and drop of suspended tasks: the dry run counts the filtered set, the run resumes
// (drops) each once through the single-task path, and the same key again is a no-op.
func TestBulkResumeAndDrop(t *testing.T) {
	// Six failed calls would open the vendor's breaker and suspend the resumed tasks again.
	f := newFixture(t, func(c *config.Config) { c.Pipeline.BreakerThreshold = 0 })
	f.vendor.fail.Store(true)
	a := f.apply(f.applyBody("bulk-a", "bulk one", nil), http.StatusAccepted)["taskId"].(string)
	b := f.apply(f.applyBody("bulk-b", "bulk two", nil), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(a, entry.StatusSuspended, 30*time.Second)
	f.waitStatus(b, entry.StatusSuspended, 30*time.Second)
	between := time.Now().UTC().Add(10 * time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	c := f.apply(f.applyBody("bulk-c", "bulk three", nil), http.StatusAccepted)["taskId"].(string)
	f.waitStatus(c, entry.StatusSuspended, 30*time.Second)
	resumeFilter := map[string]any{"workflowId": f.pipeline, "suspendedUntil": between.Format(time.RFC3339Nano)}

	// Bad input names the field.
	r := f.env.Do(http.MethodPost, "/internal/tasks/resume", f.env.AdminKey, map[string]any{"filter": map[string]any{"suspendedSince": "yesterday"}})
	if r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("bad suspendedSince: %d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(r.Body), "filter.suspendedSince") {
		t.Fatalf("bad suspendedSince does not name the field: %s", r.Body)
	}

	dry := f.bulk(entry.BulkResume, "", map[string]any{"filter": resumeFilter, "dryRun": true}, http.StatusOK)
	if dry.Count != 2 || len(dry.Sample) != 2 || sorted(dry.Sample...)[0] != sorted(a, b)[0] || sorted(dry.Sample...)[1] != sorted(a, b)[1] {
		t.Fatalf("dry run: %+v (want %s, %s)", dry, a, b)
	}
	if all := f.bulk(entry.BulkResume, "", map[string]any{"filter": map[string]any{"workflowId": f.pipeline}, "dryRun": true}, http.StatusOK); all.Count != 3 {
		t.Fatalf("dry run of the pipeline: %+v", all)
	}
	if one := f.bulk(entry.BulkResume, "", map[string]any{"filter": map[string]any{"workflowId": f.pipeline, "chatId": "bulk-b"}, "dryRun": true}, http.StatusOK); one.Count != 1 || one.Sample[0] != b {
		t.Fatalf("dry run of one chat: %+v", one)
	}

	f.vendor.fail.Store(false)
	calls := f.vendor.calls.Load()
	key := "bulk-resume-" + f.pipeline
	st := f.bulk(entry.BulkResume, key, map[string]any{"filter": resumeFilter, "ratePerSecond": 5}, http.StatusAccepted)
	if !st.Started || st.Count != 2 {
		t.Fatalf("start: %+v", st)
	}
	done := f.waitBulk(entry.BulkResume, st.BulkID, "bulk_resume_two_tasks")
	if done.Applied != 2 || done.Skipped != 0 || done.Errors != 0 || len(done.Outcomes) != 2 {
		t.Fatalf("progress: %+v", done)
	}
	f.waitStatus(a, entry.StatusCompleted, 30*time.Second)
	f.waitStatus(b, entry.StatusCompleted, 30*time.Second)
	if n := f.vendor.calls.Load() - calls; n != 2 {
		t.Fatalf("vendor calls after the bulk resume: %d, want 2", n)
	}
	if f.status(c)["status"] != entry.StatusSuspended {
		t.Fatalf("task outside the filter moved: %v", f.status(c))
	}
	again := f.bulk(entry.BulkResume, key, map[string]any{"filter": resumeFilter, "ratePerSecond": 5}, http.StatusOK)
	if again.Started || again.BulkID != st.BulkID {
		t.Fatalf("repeat: %+v", again)
	}
	f.bulk(entry.BulkResume, key, map[string]any{"filter": map[string]any{"workflowId": f.pipeline}}, http.StatusConflict)
	if n := f.vendor.calls.Load() - calls; n != 2 {
		t.Fatalf("vendor calls after the repeat: %d, want 2", n)
	}

	// Drop: the one left.
	dropFilter := map[string]any{"workflowId": f.pipeline}
	if dd := f.bulk(entry.BulkDrop, "", map[string]any{"filter": dropFilter, "dryRun": true}, http.StatusOK); dd.Count != 1 || dd.Sample[0] != c {
		t.Fatalf("drop dry run: %+v", dd)
	}
	dkey := "bulk-drop-" + f.pipeline
	ds := f.bulk(entry.BulkDrop, dkey, map[string]any{"filter": dropFilter, "reason": "not worth it"}, http.StatusAccepted)
	dp := f.waitBulk(entry.BulkDrop, ds.BulkID, "bulk_drop_one_task")
	if dp.Applied != 1 || len(dp.Outcomes) != 1 || dp.Outcomes[0].TaskID != c || dp.Outcomes[0].Outcome != entry.OutcomeDropped {
		t.Fatalf("drop progress: %+v", dp)
	}
	f.waitStatus(c, entry.StatusDropped, 30*time.Second)
	if rep := f.bulk(entry.BulkDrop, dkey, map[string]any{"filter": dropFilter, "reason": "not worth it"}, http.StatusOK); rep.Started {
		t.Fatalf("drop repeat: %+v", rep)
	}
	if r := f.env.Do(http.MethodGet, "/internal/tasks/drop/nope", f.env.AdminKey, nil); r.Status != http.StatusNotFound {
		t.Fatalf("unknown bulk: %d %s", r.Status, r.Body)
	}
}
