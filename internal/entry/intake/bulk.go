package intake

import (
	"context"
	"errors"
	"fmt"

	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/entry"
)

// BulkBatch works one page of a bulk resume or drop (EntryBulkBatch): the next req.Limit
// suspended tasks of req.Filter after req.After, each through Resume or Drop, the single-task
// path. A task no longer suspended when its turn comes is skipped, so a repeated page (an
// activity retry) resumes or drops nothing twice.
func (t *Tasks) BulkBatch(ctx context.Context, req entry.BulkBatchRequest) (*entry.BulkBatchResult, error) {
	act, done := t.Resume, entry.OutcomeResumed
	switch req.Op {
	case entry.BulkResume:
	case entry.BulkDrop:
		act, done = t.Drop, entry.OutcomeDropped
	default:
		return nil, fmt.Errorf("bulk operation %q: %w", req.Op, errUnknownBulkOp)
	}
	ids, err := t.Runs.SuspendedPage(ctx, req.Filter, req.After, req.Limit)
	if err != nil {
		return nil, err
	}
	return bulk.Work(req, ids, func(id string) entry.BulkOutcome {
		o := entry.BulkOutcome{TaskID: id, Outcome: done}
		if _, err := act(ctx, id, req.Params); errors.Is(err, entry.ErrNotSuspended) {
			o.Outcome = entry.OutcomeSkipped
		} else if err != nil {
			o.Outcome, o.Error = entry.OutcomeError, err.Error()
		}
		return o
	}), nil
}

var errUnknownBulkOp = errors.New("unknown bulk operation")
