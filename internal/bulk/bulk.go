// Package bulk is the paced loop of every bulk operation's workflow (the entry queue's resume
// and drop, the pipeline's redrive): one batch activity per interval, paging by a cursor, the
// run continued as new every BatchesPerRun batches so a large operation's history stays small.
package bulk

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/taskloom/taskloom/internal/searchattr"
)

// BatchesPerRun bounds one run's history; the operation continues as new after it.
const BatchesPerRun = 200

// BatchOptions are a batch activity's: retried a few times (every task's operation in it is
// idempotent, so a repeated batch does nothing twice), then the operation fails.
var BatchOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Minute,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 10},
}

// Batch runs the batch after cursor and returns the last task it covered and whether the
// operation is done.
type Batch func(ctx workflow.Context, after string) (last string, done bool, err error)

// Run runs batches from *cursor, moving it after each, until one says the operation is done,
// sleeping interval between them; it then sets TaskloomStatus to status. After BatchesPerRun
// batches it returns restart's error instead: a continue-as-new whose input carries *cursor.
func Run(ctx workflow.Context, cursor *string, interval time.Duration, batch Batch, restart func() error, status string) error {
	for n := 0; ; n++ {
		if n == BatchesPerRun {
			return restart()
		}
		last, done, err := batch(ctx, *cursor)
		if err != nil {
			return err
		}
		*cursor = last
		if done {
			break
		}
		if err := workflow.Sleep(ctx, interval); err != nil {
			return err
		}
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, searchattr.Status.ValueSet(status)); err != nil {
		workflow.GetLogger(ctx).Warn("upsert TaskloomStatus failed", "err", err)
	}
	return nil
}
