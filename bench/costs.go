package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/promread"
)

// costs is how many commands the app's processes (API and worker) had sent to MongoDB and
// Redis at one moment, read from their /metrics. The difference over a scenario divided by
// its units is the portable cost the bench reports beside the timings: it holds on any
// engine, where FerretDB's timings do not. The load generator's own clients (seeding,
// baselines) are in another process and never counted.
type costs struct {
	mongoBy map[string]float64 // by "command collection"
	redisBy map[string]float64 // by command
}

func (a *app) costs(ctx context.Context) (costs, error) {
	c := costs{mongoBy: map[string]float64{}, redisBy: map[string]float64{}}
	for _, url := range a.metricsURLs {
		fams, err := promread.Scrape(ctx, url)
		if err != nil {
			return costs{}, err
		}
		for _, m := range fams[mongox.CommandsMetric].GetMetric() {
			c.mongoBy[promread.Label(m, "command")+" "+promread.Label(m, "collection")] += m.GetCounter().GetValue()
		}
		for _, m := range fams[platform.RedisCommandsMetric].GetMetric() {
			c.redisBy[promread.Label(m, "command")] += m.GetCounter().GetValue()
		}
	}
	return c, nil
}

// meter measures the app's commands over one part of a scenario.
type meter struct {
	a      *app
	before costs
	err    error
}

func (r *run) meter(ctx context.Context) *meter {
	m := &meter{a: r.app}
	m.before, m.err = r.app.costs(ctx)
	return m
}

// charge sets res's commands per unit from what the app sent since the meter started, over
// res.N units. The schedules are paused (pauseSchedules); what background work is left in the
// window (cache refreshes) is included, so the figures are an upper bound.
func (m *meter) charge(ctx context.Context, res *Result) {
	after, err := m.a.costs(ctx)
	if err = errors.Join(m.err, err); err == nil && res.N == 0 {
		err = errors.New("no units counted")
	}
	if err != nil {
		res.Notes += fmt.Sprintf("; commands per unit unavailable: %v", err)
		return
	}
	res.Costed = true
	res.MongoByCommand = perUnitBy(after.mongoBy, m.before.mongoBy, res.N)
	res.RedisByCommand = perUnitBy(after.redisBy, m.before.redisBy, res.N)
	res.MongoPerUnit, res.RedisPerUnit = total(res.MongoByCommand), total(res.RedisByCommand)
}

func total(by map[string]float64) float64 {
	var n float64
	for _, v := range by {
		n += v
	}
	return n
}

// perUnitBy is what each key of after grew by since before, per unit; nil when nothing did.
func perUnitBy(after, before map[string]float64, n int) map[string]float64 {
	var out map[string]float64
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			if out == nil {
				out = map[string]float64{}
			}
			out[k] = d / float64(n)
		}
	}
	return out
}

// chargeCalls adds the commands per API call to a costed row whose unit is not the call: the
// same commands over calls instead of res.N units.
func chargeCalls(res *Result, calls int) {
	if !res.Costed || calls == 0 {
		return
	}
	res.Calls = calls
	res.MongoPerCall = res.MongoPerUnit * float64(res.N) / float64(calls)
	res.RedisPerCall = res.RedisPerUnit * float64(res.N) / float64(calls)
}

// printBreakdown lists, per costed row, its MongoDB commands per unit by command and collection
// and its Redis commands per unit by command, largest first; shares under 0.005 per unit are
// left out.
func printBreakdown(w io.Writer, results []Result) {
	fmt.Fprintln(w, "\nMongoDB commands per unit by command and collection:")
	for _, res := range results {
		printShares(w, res.Scenario, res.MongoByCommand)
	}
	fmt.Fprintln(w, "\nRedis commands per unit by command:")
	for _, res := range results {
		printShares(w, res.Scenario, res.RedisByCommand)
	}
}

func printShares(w io.Writer, scenario string, shares map[string]float64) {
	keys := slices.Collect(maps.Keys(shares))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(shares[b], shares[a]), strings.Compare(a, b))
	})
	var parts []string
	for _, k := range keys {
		if v := shares[k]; v >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.2f", strings.TrimSpace(k), v))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "  %s: %s\n", scenario, strings.Join(parts, ", "))
	}
}
