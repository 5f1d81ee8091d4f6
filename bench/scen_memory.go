package main

import (
	"fmt"
	"strings"
)

// benchMemory reports each worker's and API's resident memory at the end of the run (and their
// peaks), read from /proc.
func benchMemory(a *app) Result {
	res := Result{Scenario: "memory"}
	var parts []string
	for _, role := range []string{"worker", "api"} {
		for _, pid := range a.procs[role] {
			rss, peak, err := rssMB(pid)
			if err != nil {
				res.Skipped = fmt.Sprintf("%s RSS: %v", role, err)
				return res
			}
			parts = append(parts, fmt.Sprintf("%s RSS %.0f MB (peak %.0f MB)", strings.Replace(role, "api", "API", 1), rss, peak))
		}
	}
	res.Baseline = "-"
	res.Notes = strings.Join(parts, ", ") + " at the end of the run"
	return res
}
