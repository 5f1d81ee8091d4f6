package taskecho

import (
	"context"

	"go.temporal.io/sdk/workflow"

	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// versionPrefixedNames: the workflows schedule their activities by their TaskEcho-prefixed names
// (TaskEchoReleaseExpiredLeases, …), unique across subsystems. Runs started before keep
// scheduling the bare names (ReleaseExpiredLeases, …) their histories recorded, which
// legacyActivities keeps registered.
const versionPrefixedNames = "taskecho-prefixed-activity-names"

// activityFuncs are the activities one run schedules, as method values on a nil receiver: they
// only name the activity and type its arguments.
type activityFuncs struct {
	releaseExpiredLeases func(context.Context) (taskechoact.SweepResult, error)
	expireTasks          func(context.Context) (int, error)
	checkAlerts          func(context.Context) (taskechoact.SweepResult, error)
	applyQueueOpBatch    func(context.Context, taskechoact.QueueOpBatch) (taskechoact.QueueOpBatchResult, error)
	finishQueueOp        func(context.Context, queueop.Op, int) error
	runQueueOp           func(context.Context, taskechoact.QueueOpRun) (taskechoact.QueueOpRunResult, error)
}

// activitiesFor picks the names of a run's versionPrefixedNames version.
func activitiesFor(v workflow.Version) activityFuncs {
	if v == workflow.DefaultVersion {
		var l *legacyActivities
		return activityFuncs{releaseExpiredLeases: l.ReleaseExpiredLeases, expireTasks: l.ExpireTasks,
			checkAlerts: l.CheckAlertsAndPrune, applyQueueOpBatch: l.ApplyQueueOpBatch, finishQueueOp: l.FinishQueueOp}
	}
	var a *taskechoact.Activities
	return activityFuncs{releaseExpiredLeases: a.TaskEchoReleaseExpiredLeases, expireTasks: a.TaskEchoExpireTasks,
		checkAlerts: a.TaskEchoCheckAlerts, applyQueueOpBatch: a.TaskEchoApplyQueueOpBatch, finishQueueOp: a.TaskEchoFinishQueueOp,
		runQueueOp: a.TaskEchoRunQueueOp}
}

// legacyActivities registers the bare activity names that sweeps and queue operations started
// before versionPrefixedNames still schedule, each doing what its prefixed successor does. It is
// a struct of its own, registered beside taskechoact.Activities, so the old names stay out of the
// activities' own API. Delete it, with the DefaultVersion branches, once every run started
// before the change has finished.
type legacyActivities struct{ acts *taskechoact.Activities }

func (l *legacyActivities) ReleaseExpiredLeases(ctx context.Context) (taskechoact.SweepResult, error) {
	return l.acts.TaskEchoReleaseExpiredLeases(ctx)
}

func (l *legacyActivities) ExpireTasks(ctx context.Context) (int, error) {
	return l.acts.TaskEchoExpireTasks(ctx)
}

func (l *legacyActivities) CheckAlertsAndPrune(ctx context.Context) (taskechoact.SweepResult, error) {
	return l.acts.TaskEchoCheckAlerts(ctx)
}

func (l *legacyActivities) ApplyQueueOpBatch(ctx context.Context, in taskechoact.QueueOpBatch) (taskechoact.QueueOpBatchResult, error) {
	return l.acts.TaskEchoApplyQueueOpBatch(ctx, in)
}

func (l *legacyActivities) FinishQueueOp(ctx context.Context, op queueop.Op, changed int) error {
	return l.acts.TaskEchoFinishQueueOp(ctx, op, changed)
}
