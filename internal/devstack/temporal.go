package devstack

import "github.com/taskloom/taskloom/internal/searchattr"

// TemporalDynamicConfig is the dynamic configuration every Temporal dev server taskloom runs
// gets (temporal-dev.sh passes the same values). matching.enableFairness makes a task queue
// dispatch its backlog in turn over fairness keys — one per pipeline user — instead of first
// come, first served; the pinned server (1.29) ignores fairness keys without it. Fairness is
// kept per task-queue partition, so the dev server, one process, runs each queue as a single
// partition and its order is exact (docs/pipelines.md "Fair under load").
//
// system.forceSearchAttributesCacheRefreshOnRead=false puts back the server's own default. The
// CLI's dev server turns it on so that a search attribute created at run time is seen at once;
// the server's documentation of the setting says it "should not be turned on in production".
// With it on, every search attribute a start, an upsert or a version marker carries re-reads
// the cluster metadata and the namespace from the database (measured on the pinned server: a
// workflow with three start attributes, two version markers and one upsert made 44 persistence
// requests against 15 without them), so the stand-in charged search attributes a cost no real
// cluster pays. taskloom's attributes are all registered when the server starts
// (searchattr.DevServerArgs), before anything reads them, so the cache never holds a stale set.
//
// system.enableActivityEagerExecution=true lets the server hand an activity to the worker whose
// workflow task scheduled it, in that task's completion, when the worker has a free slot (the
// SDK asks for it by default; the pinned server's default is off). The activity then skips the
// task queue: no matching round and no poll, ~1.5 server database requests fewer per activity
// (bench: 3-step pipeline 34.5 → 29.8, 1-step 20.0 → 18.5), and a pipeline's step starts as
// soon as its admission is decided. The workflow task queue, where fairness applies, still
// decides which task runs.
var TemporalDynamicConfig = []string{
	"matching.enableFairness=true",
	"matching.numTaskqueueReadPartitions=1",
	"matching.numTaskqueueWritePartitions=1",
	"system.forceSearchAttributesCacheRefreshOnRead=false",
	"system.enableActivityEagerExecution=true",
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
