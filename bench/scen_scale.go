package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

const (
	// scaleSamples is how many times each operation is measured below scaleLargeSize. A round pulls
	// pullLimit tasks and appends to one finished task, so a size holds scalePending(scaleSamples)
	// pending tasks (950) and at least scaleSamples finished ones: scaleMinSize.
	scaleSamples = 15
	scaleMinSize = scaleSamples*(pullLimit+1) + scaleWindow
	// The stand-in scans the collection for every query but a key lookup, so a round's time grows
	// with the size (measured under the 7-helper load of 2026-11-28: about 6 s at 400 tasks,
	// 60 s at 4,000): from scaleLargeSize on, the series measures scaleSamplesLarge rounds, and
	// a p99 there is the slowest of those.
	scaleSamplesLarge, scaleLargeSize = 3, 10000
	// scaleSizesDefault is BENCH_SCALE_SIZES' default: stored TaskEcho tasks in the project.
	scaleSizesDefault = "1000,10000,100000"
)

// scaleBudget is the time the series may take (issue: the three default sizes in 15 minutes on
// the 2-core machine). Before a size, the series projects its time from the previous size's,
// linearly (on the stand-in every query but a key lookup scans), and a size that would end past
// the budget is not run: its row says so, with the projection and the previous size's slowest
// operation.
const scaleBudget = 15 * time.Minute

// benchScale is the scale series (BENCH_ONLY=scale): for each size of
// BENCH_SCALE_SIZES it loads one TaskEcho project of that many tasks (and as many pipeline,
// entry and crawl tasks) straight into the collections, measures every operation
// scaleSamplesAt(size) times in this process against the same database the app uses (commands
// counted per call by a tally, so the figure is the call's own, exact, with nothing of the app's
// background work in it), then removes the project. One row per operation and size; rows past
// the first size carry the p50 growth ratio from the first.
func benchScale(ctx context.Context, r *run) []Result {
	sizes, err := scaleSizes(os.Getenv("BENCH_SCALE_SIZES"))
	if err != nil {
		return []Result{{Scenario: "scale", Skipped: err.Error()}}
	}
	deps := newScaleDeps(ctx, r.p.Mongo, r.echo, r.p.Temporal, r.p.Config.Temporal.TaskQueue, r.p.Redis, r.p.Config.Redis.KeyPrefix)
	var rows []Result
	first := map[string]float64{} // p50 at the first size, by operation
	started := time.Now()
	var took time.Duration // the previous size's load and rounds
	var slowest string
	for k, size := range sizes {
		if k > 0 {
			est := time.Duration(float64(took) * float64(size) / float64(sizes[k-1]) * float64(scaleSamplesAt(size)) / float64(scaleSamplesAt(sizes[k-1])))
			if spent := time.Since(started); spent+est > scaleBudget {
				rows = append(rows, Result{Scenario: fmt.Sprintf("scale@%d", size), Skipped: fmt.Sprintf(
					"not run: %d tasks took %s (load and rounds; slowest %s), so %d would take about %s more after %s spent, past the series' %s: the stand-in scans the collection for every query but an _id or unique-key lookup",
					sizes[k-1], took.Round(time.Second), slowest, size, est.Round(time.Minute), spent.Round(time.Second), scaleBudget)})
				continue
			}
		}
		t0 := time.Now()
		figs, load, err := runScaleSize(ctx, r.p.Mongo, deps, size)
		took = time.Since(t0)
		if err != nil {
			rows = append(rows, Result{Scenario: fmt.Sprintf("scale@%d", size), Skipped: err.Error()})
			break
		}
		slowest = slowestOp(figs)
		for _, f := range figs {
			res := scaleRow(f, size, load)
			if base, ok := first[f.op]; !ok {
				first[f.op] = res.P50Ms
			} else if base > 0 {
				res.Notes += fmt.Sprintf("; p50 growth %.2fx from %d tasks", res.P50Ms/base, sizes[0])
			}
			rows = append(rows, res)
		}
	}
	return rows
}

// runScaleSize loads a project of size tasks, measures its rounds and removes it.
func runScaleSize(ctx context.Context, db *mongo.Database, deps scaleDeps, size int) ([]*scaleFigures, time.Duration, error) {
	p := newScaleProject("bench-scale-"+suffix(), size, scalePending(scaleSamples))
	t0 := time.Now()
	if err := loadScaleProject(ctx, db, p); err != nil {
		return nil, 0, err
	}
	load := time.Since(t0)
	logf("scale: loaded %d tasks in %s (%.0f tasks/s)", size, load.Round(time.Millisecond), float64(size)/load.Seconds())
	t0 = time.Now()
	samples := scaleSamplesAt(size)
	figs, err := measureScale(ctx, deps, p, samples)
	logf("scale: measured %d rounds at %d tasks in %s", samples, size, time.Since(t0).Round(time.Second))
	for _, f := range figs {
		if len(f.commands) > 0 {
			logf("scale:   %-32s p50 %8.1f ms, %d failed  %s", f.op, f.lat.percentile(0.5), len(f.failed), commandSummary(f.commands[0]))
		}
	}
	if derr := dropScaleProject(ctx, db, p); derr != nil {
		logf("scale: %v", derr)
	}
	return figs, load, err
}

// slowestOp names the operation of figs with the highest p50, with it.
func slowestOp(figs []*scaleFigures) string {
	var top *scaleFigures
	for _, f := range figs {
		if top == nil || f.lat.percentile(0.5) > top.lat.percentile(0.5) {
			top = f
		}
	}
	return fmt.Sprintf("%s, p50 %.0f ms", top.op, top.lat.percentile(0.5))
}

// scaleRow is one operation's row at one size.
func scaleRow(f *scaleFigures, size int, load time.Duration) Result {
	if len(f.lat) == 0 {
		return Result{Scenario: fmt.Sprintf("scale %s @%d", f.op, size), Skipped: "every call failed: " + strings.Join(f.failed, "; ")}
	}
	mongoBy, redisBy, temporalBy := f.byCommand()
	res := Result{Scenario: fmt.Sprintf("scale %s @%d", f.op, size), Unit: "ops", N: len(f.lat),
		P50Ms: f.lat.percentile(0.50), P99Ms: f.lat.percentile(0.99), Costed: true,
		MongoPerUnit: total(mongoBy), MongoByCommand: mongoBy, RedisPerUnit: total(redisBy), RedisByCommand: redisBy}
	res.Notes = fmt.Sprintf("%d tasks stored (loaded in %s); commands per op: %s (the services' calls, in process: "+
		"the HTTP layer's pull limiter and rate limits are not in them); temporal calls: %v; documents examined: %s",
		size, load.Round(time.Millisecond), commandSummary(f.commands[0]), total(temporalBy), f.examined)
	if f.varies() {
		res.Notes += "; COMMANDS VARY between samples"
	}
	if len(f.failed) > 0 {
		res.Notes += fmt.Sprintf("; %d of %d calls FAILED (not in p50/p99), first: %s", len(f.failed), len(f.failed)+len(f.lat), f.failed[0])
	}
	return res
}

// scaleSamplesAt is how many rounds the series measures at size.
func scaleSamplesAt(size int) int {
	if size < scaleLargeSize {
		return scaleSamples
	}
	return scaleSamplesLarge
}

// scaleSizes parses BENCH_SCALE_SIZES ("1000,10000,100000"), in the order given.
func scaleSizes(v string) ([]int, error) {
	if v == "" {
		v = scaleSizesDefault
	}
	var sizes []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < scaleMinSize {
			return nil, fmt.Errorf("BENCH_SCALE_SIZES=%q: want comma-separated sizes of at least %d tasks", v, scaleMinSize)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// mergeScaleRows writes the scale series' rows into the results file a full run wrote, in place
// of the series' rows of an earlier run: the series runs alone (BENCH_ONLY=scale), and its
// figures belong beside the other scenarios'.
func mergeScaleRows(path string, rows []Result) error {
	var rep report
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	kept := rep.Results[:0]
	for _, res := range rep.Results {
		if !strings.HasPrefix(res.Scenario, "scale") {
			kept = append(kept, res)
		}
	}
	rep.Results = append(kept, rows...)
	return rep.writeJSON(path)
}
