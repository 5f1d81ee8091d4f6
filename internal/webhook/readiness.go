package webhook

import (
	"fmt"
	"strings"
)

// Readiness is the verdict on a row's tasks.
type Readiness struct {
	Ready bool
	// Waiting lists "TaskID=status" for every task that is not finished (status "missing"
	// when the task row does not exist, "empty" when its Status is blank).
	Waiting []string
}

// Evaluate says whether every TaskID is finished: Status success or error. pending, failed,
// dispatched, running, an empty Status and a missing row all mean "wait".
func Evaluate(taskIDs []string, statuses map[string]string) Readiness {
	var r Readiness
	for _, id := range taskIDs {
		st, ok := statuses[id]
		switch {
		case !ok:
			r.Waiting = append(r.Waiting, id+"=missing")
		case st == "":
			r.Waiting = append(r.Waiting, id+"=empty")
		case st != StatusSuccess && st != StatusError:
			r.Waiting = append(r.Waiting, id+"="+st)
		}
	}
	r.Ready = len(taskIDs) > 0 && len(r.Waiting) == 0
	if len(taskIDs) == 0 {
		r.Waiting = []string{"no TaskIDs"}
	}
	return r
}

// Statuses maps each found TaskID to its Status.
func Statuses(tasks map[string]Task) map[string]string {
	m := make(map[string]string, len(tasks))
	for id, tk := range tasks {
		m[id] = tk.Status
	}
	return m
}

func summarize(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}
