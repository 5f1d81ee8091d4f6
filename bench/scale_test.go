package main

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/schema"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/testenv"
)

// TestMain also fails the package when a query the series runs is served by none of the stores'
// declared indexes (testenv.Main's coverage check).
func TestMain(m *testing.M) { testenv.Main(m) }

// TestScaleCommandsDoNotGrowWithTheStore loads the scale series' project at two sizes ten times
// apart through the series' own loader and runs its operations: every operation must send
// exactly the same MongoDB and Redis commands and Temporal calls at both sizes, and the same in
// every sample. A query that
// loses its limit or batching (a read per task, a count that pages through everything) changes
// the count and fails here.
func TestScaleCommandsDoNotGrowWithTheStore(t *testing.T) {
	const samples = 2
	_, tc := testenv.Temporal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	at := map[int][]*scaleFigures{}
	for _, size := range []int{400, 4000} {
		db := testenv.Mongo(t)          // each size in its own database, dropped when the test ends
		rdb, prefix := testenv.Redis(t) // and its own client: newScaleDeps hooks it once
		if err := schema.Ensure(ctx, db); err != nil {
			t.Fatal(err)
		}
		svc, err := taskecho.New(taskechodb.New(db), taskecho.DefaultSettings(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := newScaleProject(testenv.Unique("scale-"), size, scalePending(samples))
		if err := loadScaleProject(ctx, db, p); err != nil {
			t.Fatal(err)
		}
		figs, err := measureScale(ctx, newScaleDeps(ctx, db, svc, tc, "scale-test", rdb, prefix), p, samples)
		if err != nil {
			t.Fatal(err)
		}
		at[size] = figs
	}
	for i, small := range at[400] {
		large := at[4000][i]
		if len(small.failed)+len(large.failed) > 0 {
			t.Errorf("%s failed: at 400 %v, at 4,000 %v", small.op, small.failed, large.failed)
			continue
		}
		if small.varies() || large.varies() {
			t.Errorf("%s: commands differ between samples: at 400 %v, at 4,000 %v", small.op, small.commands, large.commands)
			continue
		}
		if len(small.commands[0]) == 0 {
			t.Errorf("%s: no command or call counted, so the sizes' counts cannot differ", small.op)
			continue
		}
		if !maps.Equal(small.commands[0], large.commands[0]) {
			t.Errorf("%s: %s with 400 tasks stored, %s with 4,000", small.op, commandSummary(small.commands[0]), commandSummary(large.commands[0]))
			continue
		}
		t.Logf("%s: %s at both sizes; p50 %.1f ms at 400, %.1f ms at 4,000", small.op, commandSummary(small.commands[0]),
			small.lat.percentile(0.5), large.lat.percentile(0.5))
	}
}
