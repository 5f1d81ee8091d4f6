package devstack

import "github.com/taskloom/taskloom/internal/searchattr"

// TemporalDynamicConfig is the dynamic configuration every Temporal dev server taskloom runs
// gets (temporal-dev.sh passes the same values). matching.enableFairness makes a task queue
// dispatch its backlog in turn over fairness keys — one per pipeline user — instead of first
// come, first served; the pinned server (1.29) ignores fairness keys without it. Fairness is
// kept per task-queue partition, so the dev server, one process, runs each queue as a single
// partition and its order is exact (README "Fair under load").
var TemporalDynamicConfig = []string{
	"matching.enableFairness=true",
	"matching.numTaskqueueReadPartitions=1",
	"matching.numTaskqueueWritePartitions=1",
}

// TemporalDevArgs are the `temporal server start-dev` arguments of the test harness and the
// bench: taskloom's search attributes and TemporalDynamicConfig.
func TemporalDevArgs() []string {
	args := searchattr.DevServerArgs()
	for _, kv := range TemporalDynamicConfig {
		args = append(args, "--dynamic-config-value", kv)
	}
	return args
}
