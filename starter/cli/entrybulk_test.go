package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// `starter entry resume|drop`: the dry run counts the filter's suspended tasks; the run prints
// done/total progress lines and the outcomes; the same key again starts nothing. The tasks here
// are workflow_runs documents without a workflow (as after Temporal's retention), so each
// signal fails and is reported as an error outcome, not retried for ever. (api/entry's
// TestBulkResumeAndDrop covers tasks that run.)
func TestEntryBulkCommands(t *testing.T) {
	env := e2e.New(t)
	ctx := env.Context()
	name := testenv.Unique("cli_entry_")
	runs := entrydb.New(env.Platform.Mongo)
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	for _, id := range []string{entry.TaskID(name + "-1"), entry.TaskID(name + "-2")} {
		if _, err := env.Platform.Mongo.Collection(entrydb.CollRuns).InsertOne(ctx, &entry.Run{TaskID: id, IdempotencyKey: id,
			WorkflowID: name, Channel: entry.ChannelHTTP, Status: entry.StatusSuspended, SuspendedReason: "Retries exhausted",
			SuspendedAt: &at, CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	wf := entrywf.NewClient(env.Platform.Temporal, env.Config.Temporal.TaskQueue)
	var out bytes.Buffer
	f := entryBulkFlags{filter: entry.BulkFilter{WorkflowID: name, Reason: "retries"}, bulkFlags: bulkFlags{dryRun: true, rate: 5, wait: true}}
	if err := entryBulk(ctx, &out, runs, wf, entry.BulkResume, f); err != nil || !strings.HasPrefix(out.String(), "2 suspended tasks would be resumed\n") {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	out.Reset()
	f.filter.Reason = "nothing like it"
	if err := entryBulk(ctx, &out, runs, wf, entry.BulkDrop, f); err != nil || out.String() != "0 suspended tasks would be dropped\n" {
		t.Fatalf("dry run of another reason: %v\n%s", err, out.String())
	}
	out.Reset()
	f.filter.Reason, f.dryRun, f.key = "", false, testenv.Unique("cli-entry-bulk-")
	if err := entryBulk(ctx, &out, runs, wf, entry.BulkDrop, f); err != nil {
		t.Fatalf("bulk drop: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), " started (workflow entry-bulk-drop:") || !strings.Contains(out.String(), "2/2 applied=0 skipped=0 errors=2\n") {
		t.Fatalf("progress lines:\n%s", out.String())
	}
	out.Reset()
	if err := entryBulk(ctx, &out, runs, wf, entry.BulkDrop, f); err != nil || !strings.Contains(out.String(), "already started by an earlier run with this key") {
		t.Fatalf("repeat: %v\n%s", err, out.String())
	}
	f.since = "yesterday"
	if err := entryBulk(ctx, &out, runs, wf, entry.BulkDrop, f); err == nil || !strings.Contains(err.Error(), "--suspended-since") {
		t.Fatalf("bad --suspended-since: %v", err)
	}
}
