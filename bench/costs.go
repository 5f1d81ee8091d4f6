package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/platform"
)

// costs is how many commands the app's processes (API and worker) had sent to MongoDB and
// Redis at one moment, read from their /metrics. The difference over a scenario divided by
// its units is the portable cost the README reports beside the timings: it holds on any
// engine, where FerretDB's timings do not. The load generator's own clients (seeding,
// baselines) are in another process and never counted.
type costs struct {
	mongo, redis float64
	mongoBy      map[string]float64 // by "command collection"
	redisBy      map[string]float64 // by command
}

func (a *app) costs(ctx context.Context) (costs, error) {
	c := costs{mongoBy: map[string]float64{}, redisBy: map[string]float64{}}
	for _, url := range []string{a.apiURL + "/metrics", a.workerMetricsURL} {
		fams, err := scrape(ctx, url)
		if err != nil {
			return costs{}, err
		}
		c.mongo += sum(fams[mongox.CommandsMetric])
		c.redis += sum(fams[platform.RedisCommandsMetric])
		for _, m := range fams[mongox.CommandsMetric].GetMetric() {
			c.mongoBy[label(m, "command")+" "+label(m, "collection")] += m.GetCounter().GetValue()
		}
		for _, m := range fams[platform.RedisCommandsMetric].GetMetric() {
			c.redisBy[label(m, "command")] += m.GetCounter().GetValue()
		}
	}
	return c, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return fams, nil
}

func sum(f *dto.MetricFamily) float64 {
	if f == nil {
		return 0
	}
	var n float64
	for _, m := range f.GetMetric() {
		n += m.GetCounter().GetValue()
	}
	return n
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
	res.MongoPerUnit = (after.mongo - m.before.mongo) / float64(res.N)
	res.RedisPerUnit = (after.redis - m.before.redis) / float64(res.N)
	res.Costed = true
	res.MongoByCommand = perUnitBy(after.mongoBy, m.before.mongoBy, res.N)
	res.RedisByCommand = perUnitBy(after.redisBy, m.before.redisBy, res.N)
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
