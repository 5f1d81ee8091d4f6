package main

import "fmt"

// benchMemory reports the worker's and the API's resident memory at the end of the run (and
// their peaks), read from /proc.
func benchMemory(a *app) Result {
	res := Result{Scenario: "memory"}
	wr, wp, err := rssMB(a.worker.Process.Pid)
	if err != nil {
		res.Skipped = "worker RSS: " + err.Error()
		return res
	}
	ar, ap, err := rssMB(a.api.Process.Pid)
	if err != nil {
		res.Skipped = "API RSS: " + err.Error()
		return res
	}
	res.Baseline = "-"
	res.Notes = fmt.Sprintf("worker RSS %.0f MB (peak %.0f MB), API RSS %.0f MB (peak %.0f MB) at the end of the run", wr, wp, ar, ap)
	return res
}
