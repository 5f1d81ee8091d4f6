package echo

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// taskUpdate is one per-document write of a bulk operation on tasks already claimed in the ledger.
type taskUpdate struct {
	task   *Task
	update bson.M
}

// maxBulkStatements caps the statements of one bulk write. FerretDB v1 keeps the lookup of every
// statement of an update command open until the whole command ends, each on its own SQLite
// connection, and its pool has 100: a 100-statement write waited forever for a connection to
// write with.
const maxBulkStatements = 25

// bulkWrite applies per-task updates to tasks won in the claim ledger, as unordered bulk writes
// of _id-addressed updates (see claim.go for why _id alone is the right filter), one round trip
// per maxBulkStatements tasks.
func (s *Service) bulkWrite(ctx context.Context, op string, ups []taskUpdate) error {
	for chunk := range slices.Chunk(ups, maxBulkStatements) {
		models := make([]mongo.WriteModel, len(chunk))
		for i, u := range chunk {
			models[i] = mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": u.task.ID}).SetUpdate(withRevInc(u.update))
		}
		err := retryBusy(ctx, func() error {
			_, err := s.tasks.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
			return err
		})
		if err != nil {
			return wrap(op, err)
		}
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
