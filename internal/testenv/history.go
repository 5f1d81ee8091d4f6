package testenv

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
)

var record = flag.Bool("record", false,
	"write the histories of the recorded end-to-end runs to testdata/histories/<subsystem>/ for the replay tests")

// RecordHistory writes a finished workflow's history to testdata/histories/<subsystem>/<name>.json,
// in the JSON that `temporal workflow show --output json` prints, when the tests run with
// -record (e.g. `go test ./api/pipeline -run . -record`). The replay test of
// workflows/<subsystem> replays every file there. runID "" is the latest run.
func RecordHistory(t testing.TB, c client.Client, subsystem, workflowID, runID, name string) {
	t.Helper()
	if !*record {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("record history of %s: %v", workflowID, err)
		}
		h.Events = append(h.Events, ev)
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatalf("record history of %s: %v", workflowID, err)
	}
	dir := filepath.Join(RepoRoot(), "testdata", "histories", subsystem)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
