package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is one scenario's row: what taskloom does, what the baseline does on the same servers
// in the same run, and their ratio. A scenario whose subsystem is missing sets Skipped instead
// of numbers.
type Result struct {
	Scenario string `json:"scenario"`
	// Unit names what Throughput counts per second (pipelines, tasks, tweets, rows).
	Unit       string  `json:"unit,omitempty"`
	N          int     `json:"n,omitempty"`
	Throughput float64 `json:"throughput_per_s,omitempty"`
	P50Ms      float64 `json:"p50_ms,omitempty"`
	P99Ms      float64 `json:"p99_ms,omitempty"`

	Baseline           string  `json:"baseline,omitempty"`
	BaselineThroughput float64 `json:"baseline_throughput_per_s,omitempty"`
	BaselineP50Ms      float64 `json:"baseline_p50_ms,omitempty"`
	BaselineP99Ms      float64 `json:"baseline_p99_ms,omitempty"`
	// Ratio is taskloom / baseline of RatioOf ("throughput" or "p50").
	Ratio   float64 `json:"ratio,omitempty"`
	RatioOf string  `json:"ratio_of,omitempty"`

	// MongoPerUnit and RedisPerUnit are the commands the app sent per unit of work: the
	// portable costs, which hold on any engine (see costs).
	MongoPerUnit float64 `json:"mongo_commands_per_unit,omitempty"`
	RedisPerUnit float64 `json:"redis_commands_per_unit,omitempty"`
	// MongoByCommand splits MongoPerUnit by "command collection" (update quotas, find
	// providers …): which writes and reads a unit costs, and what background work was in the
	// window.
	MongoByCommand map[string]float64 `json:"mongo_commands_per_unit_by_command,omitempty"`
	// RedisByCommand splits RedisPerUnit by command (evalsha, get …).
	RedisByCommand map[string]float64 `json:"redis_commands_per_unit_by_command,omitempty"`
	// Costed says the two above were measured (0 is then a figure: the webhook scenario sends
	// none, its cost is Feishu calls).
	Costed bool `json:"costed,omitempty"`
	// Calls, MongoPerCall and RedisPerCall are the commands per API call, for a row whose unit is
	// not the call (pull counts tasks; one call hands out up to its limit).
	Calls        int     `json:"calls,omitempty"`
	MongoPerCall float64 `json:"mongo_commands_per_call,omitempty"`
	RedisPerCall float64 `json:"redis_commands_per_call,omitempty"`

	// Temporal and BaselineTemporal are what the row's and its baseline's workflow executions
	// cost on Temporal per unit (temporal.go); nil for a row that starts none.
	Temporal         *TemporalCost `json:"temporal,omitempty"`
	BaselineTemporal *TemporalCost `json:"baseline_temporal,omitempty"`

	Notes   string `json:"notes,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// TemporalCost is history events and billable actions per unit, counted by the rules of
// internal/actions from the histories of a sample of the units' executions.
type TemporalCost struct {
	EventsPerUnit  float64 `json:"events_per_unit"`
	ActionsPerUnit float64 `json:"actions_per_unit"`
	// ServerDBPerUnit is the Temporal server's database requests per unit over the timed window
	// (serverdb.go); 0 where the row does not measure them.
	ServerDBPerUnit float64 `json:"server_db_requests_per_unit,omitempty"`
	// RetriesPerUnit is the part of ActionsPerUnit that activity retries cost.
	RetriesPerUnit float64 `json:"retries_per_unit,omitempty"`
	// Sampled of Of units were counted (temporalSample at most).
	Sampled int `json:"sampled"`
	Of      int `json:"of"`
}

// latencies collects per-operation durations.
type latencies []time.Duration

func (l latencies) percentile(p float64) float64 {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(p*float64(len(s)-1) + 0.5)
	return float64(s[i].Microseconds()) / 1000
}

// fill sets the throughput and latency percentiles of r from n operations over elapsed.
func (l latencies) fill(n int, elapsed time.Duration) (tput, p50, p99 float64) {
	return float64(n) / elapsed.Seconds(), l.percentile(0.50), l.percentile(0.99)
}

// report prints the table and writes the JSON file.
type report struct {
	Started  time.Time `json:"started"`
	Scale    float64   `json:"scale"`
	Duration string    `json:"duration"`
	Host     string    `json:"host"`
	Results  []Result  `json:"results"`
	// Floors is each floor of the rows that ran, with the measured value (floors.go).
	Floors []floorCheck `json:"floors,omitempty"`
}

// columns are the table's headings; cells gives a row's.
var columns = []string{"scenario", "throughput", "p50", "p99", "commands/unit (mongo / redis)",
	"temporal events / actions per unit", "baseline", "baseline throughput", "baseline p50 / p99", "ratio", "notes"}

func cells(res Result) []string {
	if res.Skipped != "" {
		c := make([]string, len(columns))
		c[0], c[1], c[len(c)-1] = res.Scenario, "skipped", short(res.Skipped)
		return c
	}
	return []string{res.Scenario, rate(res.Throughput, res.Unit), ms(res.P50Ms), ms(res.P99Ms), perUnit(res),
		temporalCell(res), res.Baseline, rate(res.BaselineThroughput, res.Unit),
		ms(res.BaselineP50Ms) + " / " + ms(res.BaselineP99Ms), ratio(res.Ratio, res.RatioOf), res.Notes}
}

func (r *report) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(columns, "\t"))
	for _, res := range r.Results {
		fmt.Fprintln(tw, strings.Join(cells(res), "\t"))
	}
	_ = tw.Flush()
}

// markdown renders the table for docs/benchmarks.md (BENCH_MARKDOWN=path), then the floors.
func (r *report) markdown(w io.Writer) {
	fmt.Fprintln(w, "| "+strings.Join(columns, " | ")+" |")
	fmt.Fprintln(w, strings.Repeat("|---", len(columns))+"|")
	for _, res := range r.Results {
		c := cells(res)
		for i := range c {
			c[i] = strings.ReplaceAll(c[i], "|", "/")
		}
		fmt.Fprintln(w, "| "+strings.Join(c, " | ")+" |")
	}
	fmt.Fprintln(w)
	printFloorsMarkdown(w, r.Floors)
	printBreakdown(w, r.Results)
}

func (r *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func rate(v float64, unit string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %s/s", v, unit)
}

// perUnit is the commands/unit cell; "-" for rows that measure no app work (memory).
func perUnit(res Result) string {
	if !res.Costed {
		return "-"
	}
	s := fmt.Sprintf("%.2f / %.2f", res.MongoPerUnit, res.RedisPerUnit)
	if res.Calls > 0 {
		s += fmt.Sprintf(" (per call: %.2f / %.2f)", res.MongoPerCall, res.RedisPerCall)
	}
	return s
}

// temporalCell is the Temporal cost cell: the row's events / actions per unit with its sample,
// retries when any, and its baseline's; "-" for rows that start no workflow.
func temporalCell(res Result) string {
	if res.Temporal == nil {
		return "-"
	}
	s := temporalFigures(res.Temporal) + fmt.Sprintf(" (%d of %d sampled)", res.Temporal.Sampled, res.Temporal.Of)
	if b := res.BaselineTemporal; b != nil {
		s += "; baseline " + temporalFigures(b)
	}
	return s
}

func temporalFigures(t *TemporalCost) string {
	s := fmt.Sprintf("%.1f / %.2f", t.EventsPerUnit, t.ActionsPerUnit)
	if t.ServerDBPerUnit > 0 {
		s += fmt.Sprintf(" / server DB %.1f", t.ServerDBPerUnit)
	}
	if t.RetriesPerUnit > 0 {
		s += fmt.Sprintf(" (%.2f retries)", t.RetriesPerUnit)
	}
	return s
}

func ms(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", v)
}

func ratio(v float64, of string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx %s", v, of)
}

// short keeps a skip reason on one readable line; the JSON file has it in full.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}
