package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// floor is one figure the project aims at for one row of the table (docs/benchmarks.md "Floors"):
// a cost at most limit, or a throughput ratio at least limit.
type floor struct {
	row    string // Result.Scenario
	what   string
	atMost bool
	limit  float64
	m      measure
}

// measure reads one figure of a row: of is the figure (false when the row has none); leftOut,
// set for the command figures, is what of leaves out of the row's commands, named leftOutAs
// (see refreshes and handshakes).
type measure struct {
	of        func(Result) (float64, bool)
	leftOut   func(Result) float64
	leftOutAs string
}

// floors is the table of floors. A row that did not run (BENCH_ONLY) is left out of the check.
var floors = []floor{
	atMost("pipeline 1-step", "mongo commands per pipeline", 6, mongoPerUnit),
	atMost("pipeline 1-step", "temporal actions per pipeline", 5, actionsPerUnit),
	atLeast("pipeline 1-step", "throughput vs workflow + 1 no-op activity", 0.9, throughputRatio),
	atMost("pipeline 3-step", "mongo commands per pipeline", 8, mongoPerUnit),
	atMost("pipeline 3-step", "temporal actions per pipeline", 7, actionsPerUnit),
	atLeast("pipeline 3-step", "throughput vs workflow + 3 no-op activities", 0.8, throughputRatio),
	atMost("apply (no wait)", "mongo commands per apply (entry + its pipeline)", 9, mongoPerUnit),
	atMost("apply (no wait)", "temporal actions per apply (entry + its pipeline)", 9, actionsPerUnit),
	atMost("append burst", "mongo commands per append", 2, mongoPerUnit),
	atMost("pull", "mongo commands per pull call (limit 50)", 3, mongoPerCall),
	atMost("pull", "redis commands per pull call (limit 50)", 2, redisPerCall),
	atMost("crawl", "redis commands per tweet", 0.05, redisPerUnit),
	atLeast("crawl", "throughput vs franz-go consume+commit", 0.25, throughputRatio),
	atMost("webhook", "temporal actions per delivered row", 2, actionsPerUnit),
	atMost(queueOpScenario, "temporal actions per queue operation", 2, actionsPerUnit),
	atMost("noisy neighbour", "B's p95 time to start behind A's 4,000 ÷ behind 1,000", 1.25, backlogRatio),
}

func atMost(row, what string, limit float64, m measure) floor {
	return floor{row: row, what: what, atMost: true, limit: limit, m: m}
}

func atLeast(row, what string, limit float64, m measure) floor {
	return floor{row: row, what: what, limit: limit, m: m}
}

// refreshes are the commands that renew a time-bounded cache entry: a worker's provider and
// provider_health documents (every 5 s), an API key (its lookup every API_KEY_CACHE_TTL, its
// last_used_at at most once a minute). Their number follows the clock and the keys in use, not the
// units of work — per unit they shrink as the rate grows — so a MongoDB floor, a per-unit
// figure, is checked without them; the check shows what it left out.
var refreshes = []string{"find providers", "find provider_health", "find api_keys", "update api_keys"}

// handshakes are the commands go-redis sends when it opens a connection (HELLO, and CLIENT
// SETINFO for its name and version): their number follows how many connections a process's pool
// grows to under the row's concurrency, not the units of work, so a Redis floor is checked
// without them, as a MongoDB floor is without the refreshes.
var handshakes = []string{"hello", "client"}

// commands is a command floor's figure: a row's commands per unit, the sum of its by-command
// split (by), less the keys of it that follow the clock or the pool rather than the units, which
// the check shows apart as what.
func commands(by func(Result) map[string]float64, keys []string, what string) measure {
	leftOut := func(r Result) float64 {
		var n float64
		for _, k := range keys {
			n += by(r)[k]
		}
		return n
	}
	return measure{of: func(r Result) (float64, bool) { return total(by(r)) - leftOut(r), r.Costed }, leftOut: leftOut, leftOutAs: what}
}

// perCall is m over the row's API calls instead of its units.
func (m measure) perCall() measure {
	over := func(r Result, perUnit float64) float64 { return perUnit * float64(r.N) / float64(r.Calls) }
	return measure{
		of: func(r Result) (float64, bool) {
			v, ok := m.of(r)
			if !ok || r.Calls == 0 {
				return 0, false
			}
			return over(r, v), true
		},
		leftOut:   func(r Result) float64 { return over(r, m.leftOut(r)) },
		leftOutAs: m.leftOutAs,
	}
}

var (
	mongoPerUnit   = commands(func(r Result) map[string]float64 { return r.MongoByCommand }, refreshes, "cache refreshes")
	redisPerUnit   = commands(func(r Result) map[string]float64 { return r.RedisByCommand }, handshakes, "connection handshakes")
	mongoPerCall   = mongoPerUnit.perCall()
	redisPerCall   = redisPerUnit.perCall()
	actionsPerUnit = measure{of: func(r Result) (float64, bool) {
		if r.Temporal == nil {
			return 0, false
		}
		return r.Temporal.ActionsPerUnit, true
	}}
	throughputRatio = measure{of: func(r Result) (float64, bool) {
		return r.Ratio, r.RatioOf == "throughput" && r.Ratio > 0
	}}
	// backlogRatio is the noisy neighbour's: how much B's wait grew with A's backlog.
	backlogRatio = measure{of: func(r Result) (float64, bool) {
		return r.Ratio, strings.HasPrefix(r.RatioOf, "p95 time to start behind") && r.Ratio > 0
	}}
)

// floorCheck is one floor against the run.
type floorCheck struct {
	Row      string  `json:"row"`
	What     string  `json:"what"`
	Floor    string  `json:"floor"`
	Measured float64 `json:"measured,omitempty"`
	// LeftOut is what a command floor's measured figure leaves out, per unit (or per call):
	// the cache refreshes in the window (MongoDB, see refreshes) or the connection handshakes
	// (Redis, see handshakes), as LeftOutAs says.
	LeftOut   float64 `json:"left_out,omitempty"`
	LeftOutAs string  `json:"left_out_as,omitempty"`
	// Status is "held", "MISSED" or "not measured" (the row was skipped or lacks the figure).
	Status string `json:"status"`
}

// checkFloors holds the rows that ran to their floors.
func checkFloors(results []Result) []floorCheck {
	var out []floorCheck
	for _, f := range floors {
		for _, res := range results {
			if res.Scenario == f.row {
				out = append(out, f.check(res))
			}
		}
	}
	return out
}

func (f floor) check(res Result) floorCheck {
	c := floorCheck{Row: f.row, What: f.what, Floor: fmt.Sprintf(">= %gx", f.limit), Status: "not measured"}
	if f.atMost {
		c.Floor = fmt.Sprintf("<= %g", f.limit)
	}
	v, ok := f.m.of(res)
	if res.Skipped != "" || !ok {
		return c
	}
	c.Measured, c.Status = v, "MISSED"
	if f.m.leftOut != nil {
		c.LeftOut, c.LeftOutAs = f.m.leftOut(res), f.m.leftOutAs
	}
	if (f.atMost && v <= f.limit) || (!f.atMost && v >= f.limit) {
		c.Status = "held"
	}
	return c
}

func (c floorCheck) measured() string {
	if c.Status == "not measured" {
		return "-"
	}
	if strings.HasSuffix(c.Floor, "x") { // a throughput ratio
		return fmt.Sprintf("%.2fx", c.Measured)
	}
	if c.LeftOut >= 0.005 {
		return fmt.Sprintf("%.2f (+%.2f %s)", c.Measured, c.LeftOut, c.LeftOutAs)
	}
	return fmt.Sprintf("%.2f", c.Measured)
}

func printFloors(w io.Writer, checks []floorCheck) {
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w, "\nfloors (what the project aims at, docs/benchmarks.md):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range checks {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Row, c.What, c.Floor, c.measured(), c.Status)
	}
	_ = tw.Flush()
}

func printFloorsMarkdown(w io.Writer, checks []floorCheck) {
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w, "| row | floor of | floor | measured | |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, c := range checks {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", c.Row, c.What, c.Floor, c.measured(), c.Status)
	}
}
