package echo

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// taskUpdate is one per-document write of a bulk operation on tasks already claimed in the ledger.
type taskUpdate struct {
	task   *Task
	update bson.M
}

// bulkWrite applies per-task updates to tasks won in the claim ledger, in one unordered round
// trip of _id-addressed updates (see claim.go for why _id alone is the right filter).
func (s *Service) bulkWrite(ctx context.Context, op string, ups []taskUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(ups))
	for i, u := range ups {
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": u.task.ID}).SetUpdate(withRevInc(u.update))
	}
	err := retryBusy(ctx, func() error {
		_, err := s.tasks.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		return err
	})
	if err != nil {
		return wrap(op, err)
	}
	return nil
}

// bulkSame applies the same update to every task won in the claim ledger. It is one bulk write of
// _id-addressed statements rather than one updateMany over {_id: {$in: ...}}: FerretDB pushes a
// lone _id down to SQLite but scans the whole collection for $in, and the embedded database runs
// writes one at a time, so a scan inside one pull's write would stall every other writer.
func (s *Service) bulkSame(ctx context.Context, op string, tasks []*Task, update bson.M) error {
	ups := make([]taskUpdate, len(tasks))
	for i, t := range tasks {
		ups[i] = taskUpdate{task: t, update: update}
	}
	return s.bulkWrite(ctx, op, ups)
}
