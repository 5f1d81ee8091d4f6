package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	// scaleSamples is how many times each operation is measured at each size. A round pulls
	// pullLimit tasks and appends to one finished task, so a size holds scalePending(scaleSamples)
	// pending tasks (950) and at least scaleSamples finished ones: scaleMinSize.
	scaleSamples = 15
	scaleMinSize = scaleSamples*(pullLimit+1) + scaleWindow
	// scaleSamplesLarge is the samples above scaleLargeSize: on the stand-in every operation but
	// a key lookup scans the collection, so one round at 100,000 tasks takes tens of seconds and
	// 15 of them alone would pass the series' 15 minutes. Its p99 is then the slowest of 5.
	scaleSamplesLarge = 5
	scaleLargeSize    = 10000
	// scaleSizesDefault is BENCH_SCALE_SIZES' default: stored TaskEcho tasks in the project.
	scaleSizesDefault = "1000,10000,100000"
)

// benchScale is the scale series (BENCH_ONLY=scale): for each size of
// BENCH_SCALE_SIZES it loads one TaskEcho project of that many tasks straight into the
// collections, measures every operation samplesAt(size) times in this process against the same
// database the app uses (commands counted per call by a tally, so the figure is the call's own,
// exact, with nothing of the app's background work in it), then removes the project. One row
// per operation and size; the largest size's row carries the p50 growth ratio.
func benchScale(ctx context.Context, r *run) []Result {
	sizes, err := scaleSizes(os.Getenv("BENCH_SCALE_SIZES"))
	if err != nil {
		return []Result{{Scenario: "scale", Skipped: err.Error()}}
	}
	db := r.p.Mongo
	deps := newScaleDeps(ctx, db, r.echo, r.p.Temporal, r.p.Config.Temporal.TaskQueue, r.p.Redis, r.p.Config.Redis.KeyPrefix)
	var rows []Result
	first := map[string]*Result{}
	for _, size := range sizes {
		p := newScaleProject("bench-scale-"+suffix(), size, scalePending(scaleSamples))
		t0 := time.Now()
		if err := loadScaleProject(ctx, db, p); err != nil {
			return append(rows, Result{Scenario: fmt.Sprintf("scale@%d", size), Skipped: err.Error()})
		}
		load := time.Since(t0)
		logf("scale: loaded %d tasks in %s (%.0f tasks/s)", size, load.Round(time.Millisecond), float64(size)/load.Seconds())
		t0 = time.Now()
		samples := samplesAt(size)
		figs, err := measureScale(ctx, deps, p, samples)
		logf("scale: measured %d rounds at %d tasks in %s", samples, size, time.Since(t0).Round(time.Second))
		if derr := dropScaleProject(ctx, db, p); derr != nil {
			logf("scale: %v", derr)
		}
		if err != nil {
			return append(rows, Result{Scenario: fmt.Sprintf("scale@%d", size), Skipped: err.Error()})
		}
		for _, f := range figs {
			res := scaleRow(f, size, load)
			if base, ok := first[f.op]; !ok {
				first[f.op] = &res
			} else if size == sizes[len(sizes)-1] && base.P50Ms > 0 {
				res.Notes += fmt.Sprintf("; p50 growth %.2fx from %d (%s commands there)", res.P50Ms/base.P50Ms, sizes[0], fmtCount(base.MongoPerUnit))
			}
			rows = append(rows, res)
		}
	}
	return rows
}

// scaleRow is one operation's row at one size.
func scaleRow(f *scaleFigures, size int, load time.Duration) Result {
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
	return res
}

// samplesAt is how many rounds the series measures at size.
func samplesAt(size int) int {
	if size > scaleLargeSize {
		return scaleSamplesLarge
	}
	return scaleSamples
}

func fmtCount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

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
