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
	// Costed says the two above were measured (0 is then a figure: the webhook scenario sends
	// none, its cost is Feishu calls).
	Costed bool `json:"costed,omitempty"`

	Notes   string `json:"notes,omitempty"`
	Skipped string `json:"skipped,omitempty"`
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
}

func (r *report) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tthroughput\tp50\tp99\tcommands/unit (mongo / redis)\tbaseline\tbaseline throughput\tbaseline p50/p99\tratio\tnotes")
	for _, res := range r.Results {
		if res.Skipped != "" {
			fmt.Fprintf(tw, "%s\tskipped\t\t\t\t\t\t\t\t%s\n", res.Scenario, short(res.Skipped))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", res.Scenario,
			rate(res.Throughput, res.Unit), ms(res.P50Ms), ms(res.P99Ms), perUnit(res), res.Baseline,
			rate(res.BaselineThroughput, res.Unit), ms(res.BaselineP50Ms)+" / "+ms(res.BaselineP99Ms),
			ratio(res.Ratio, res.RatioOf), res.Notes)
	}
	_ = tw.Flush()
}

// markdown renders the table for README "Benchmarks" (BENCH_MARKDOWN=path).
func (r *report) markdown(w io.Writer) {
	fmt.Fprintln(w, "| scenario | throughput | p50 | p99 | commands/unit (mongo / redis) | baseline | baseline throughput | baseline p50 / p99 | ratio | notes |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, res := range r.Results {
		if res.Skipped != "" {
			fmt.Fprintf(w, "| %s | skipped | | | | | | | | %s |\n", res.Scenario, strings.ReplaceAll(short(res.Skipped), "|", "/"))
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", res.Scenario,
			rate(res.Throughput, res.Unit), ms(res.P50Ms), ms(res.P99Ms), perUnit(res), res.Baseline,
			rate(res.BaselineThroughput, res.Unit), ms(res.BaselineP50Ms)+" / "+ms(res.BaselineP99Ms),
			ratio(res.Ratio, res.RatioOf), strings.ReplaceAll(res.Notes, "|", "/"))
	}
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
	return fmt.Sprintf("%.2f / %.2f", res.MongoPerUnit, res.RedisPerUnit)
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
