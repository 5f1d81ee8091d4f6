package entry

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/entry"
)

// Bulk works the pages of a bulk resume or drop (intake.Tasks).
type Bulk interface {
	BulkBatch(ctx context.Context, req entry.BulkBatchRequest) (*entry.BulkBatchResult, error)
}

// EntryBulkBatch resumes or drops the next page of a bulk operation's suspended tasks, each
// through the single-task path; idempotent: a task no longer suspended is skipped.
func (a *Activities) EntryBulkBatch(ctx context.Context, req entry.BulkBatchRequest) (*entry.BulkBatchResult, error) {
	if a.Bulk == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no bulk operations", "EntryBulkUnavailable", errors.New("no Bulk"))
	}
	return a.Bulk.BulkBatch(ctx, req)
}
