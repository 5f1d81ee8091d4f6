package echo

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The claim ledger makes every task write a compare-and-swap, on MongoDB and on FerretDB alike.
//
// FerretDB v1 evaluates an update's filter on a copy it read earlier and then rewrites the whole
// document by _id, so two guarded updates (or findOneAndUpdates) can both "win" the same task and
// the second silently overwrites the first. Inserts into a unique _id are the one primitive it
// does enforce atomically. So a writer that has read task T at revision r first inserts the claim
// "T:r" into task_claims; only one writer can ever insert it, and the winner then writes T with
// rev r+1. Losers re-read and retry. One InsertMany (unordered) claims a whole batch in one round
// trip. Since the claim proves T is still at revision r, the write itself filters on _id alone:
// that is an index lookup on MongoDB and the one query FerretDB answers without a collection scan
// (a 10,000-task queue drained by 32 pullers depends on it).

// claimRetention is how long ledger rows are kept; the sweeper prunes older ones. It also bounds
// how long a writer that crashed between its claim and its write can block a task: once the row
// is pruned the revision is claimable again. Bulk writers (pull, reset) act within seconds of
// their read; single-task writes also filter on rev, so a stale read can never overwrite.
const claimRetention = 10 * time.Minute

// maxWriteAttempts bounds the re-read/re-claim loop of a single-task write.
const maxWriteAttempts = 8

type claimDoc struct {
	ID string    `bson:"_id"`
	At time.Time `bson:"at"`
	Op string    `bson:"op"`
	// By is unique per claimMany call, so a retried insert can recognise its own rows.
	By string `bson:"by"`
}

func claimKey(id bson.ObjectID, rev int64) string {
	return id.Hex() + ":" + strconv.FormatInt(rev, 10)
}

// claimMany claims every task at the revision it was read at and returns the winners, in order.
func (s *Service) claimMany(ctx context.Context, tasks []*Task, op string) ([]*Task, error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	now, by := s.now(), newLeaseID()
	docs := make([]any, len(tasks))
	for i, t := range tasks {
		docs[i] = claimDoc{ID: claimKey(t.ID, t.Rev), At: now, Op: op, By: by}
	}
	retried, err := s.insertClaims(ctx, docs)
	lost := map[int]bool{}
	if err != nil {
		var bwe mongo.BulkWriteException
		if !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
			return nil, wrap("claim tasks", err)
		}
		for _, we := range bwe.WriteErrors {
			if !mongo.IsDuplicateKeyError(we) && we.Code != 11000 {
				return nil, wrap("claim tasks", err)
			}
			lost[we.Index] = true
		}
	}
	if retried && len(lost) > 0 {
		if err := s.reclaimOwn(ctx, docs, by, lost); err != nil {
			return nil, err
		}
	}
	won := make([]*Task, 0, len(tasks))
	for i, t := range tasks {
		if !lost[i] {
			won = append(won, t)
		}
	}
	return won, nil
}

// reclaimOwn removes from lost the rows an earlier, partly applied attempt inserted for us.
func (s *Service) reclaimOwn(ctx context.Context, docs []any, by string, lost map[int]bool) error {
	cur, err := s.claims.Find(ctx, bson.M{"by": by})
	if err != nil {
		return wrap("re-read own claims", err)
	}
	var own []claimDoc
	if err := cur.All(ctx, &own); err != nil {
		return wrap("decode own claims", err)
	}
	mine := make(map[string]bool, len(own))
	for _, c := range own {
		mine[c.ID] = true
	}
	for i := range lost {
		if mine[docs[i].(claimDoc).ID] {
			delete(lost, i)
		}
	}
	return nil
}

// withRevInc adds the revision bump to an update document.
func withRevInc(update bson.M) bson.M {
	inc, _ := update["$inc"].(bson.M)
	if inc == nil {
		inc = bson.M{}
	}
	inc["rev"] = 1
	update["$inc"] = inc
	return update
}

// writeTask changes one task under the ledger. load reads its current version (and returns the
// domain error when it is absent); build returns the update for that version, or nil to leave it
// unchanged. It returns the task as written.
func (s *Service) writeTask(ctx context.Context, op string, load func(context.Context) (*Task, error),
	build func(*Task) (bson.M, error)) (*Task, error) {
	for range maxWriteAttempts {
		t, err := load(ctx)
		if err != nil {
			return nil, err
		}
		update, err := build(t)
		if err != nil || update == nil {
			return t, err
		}
		won, err := s.claimMany(ctx, []*Task{t}, op)
		if err != nil {
			return nil, err
		}
		if len(won) == 0 {
			continue
		}
		var res *mongo.UpdateResult
		err = retryBusy(ctx, func() error {
			var werr error
			res, werr = s.tasks.UpdateOne(ctx, bson.M{"_id": t.ID, "rev": t.Rev}, withRevInc(update))
			return werr
		})
		if err != nil {
			return nil, mapWriteErr("write task "+t.TaskID, err)
		}
		if res.MatchedCount == 0 {
			continue // deleted, or changed by a writer whose claim row was already pruned
		}
		return s.taskByOID(ctx, t.ID)
	}
	return nil, conflict("任务正在被并发修改，请重试", map[string]any{"reason": errContended.Error()})
}

// taskByOID reads a task by _id (the one query FerretDB answers without a scan).
func (s *Service) taskByOID(ctx context.Context, id bson.ObjectID) (*Task, error) {
	var t Task
	if err := s.tasks.FindOne(ctx, bson.M{"_id": id}).Decode(&t); err != nil {
		return nil, wrap("read task", err)
	}
	return &t, nil
}

// mapWriteErr turns a duplicate key into the domain's duplicate error and wraps the rest.
// FerretDB v1 reports a unique index violated by an update as an InternalError carrying
// SQLite's "UNIQUE constraint failed" instead of code 11000.
func mapWriteErr(op string, err error) error {
	if mongo.IsDuplicateKeyError(err) || strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return &Error{Kind: KindDuplicate, Message: "任务已存在", Details: map[string]any{}}
	}
	return wrap(op, err)
}

// PruneClaims deletes ledger rows older than claimRetention; the sweeper calls it.
func (s *Service) PruneClaims(ctx context.Context) (int64, error) {
	res, err := s.claims.DeleteMany(ctx, bson.M{"at": bson.M{"$lt": s.now().Add(-claimRetention)}})
	if err != nil {
		return 0, wrap("prune task claims", err)
	}
	return res.DeletedCount, nil
}

// insertClaims inserts ledger rows. It reports whether it retried (a retry can meet rows its
// own first attempt inserted). Duplicate keys are not retried: they are the answer.
func (s *Service) insertClaims(ctx context.Context, docs []any) (retried bool, err error) {
	attempts := 0
	err = retryBusy(ctx, func() error {
		attempts++
		_, err := s.claims.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
		return err
	})
	return attempts > 1, err
}

// retryBusy runs a write again while the store reports write-lock contention. FerretDB's SQLite
// backend answers SQLITE_BUSY ("database is locked") when many writers queue up; the failed
// statement's transaction is rolled back, so running it again is safe. Writes passed here are
// either single statements or per-task $set/$inc updates whose repetition only bumps rev again.
func retryBusy(ctx context.Context, write func() error) error {
	var err error
	for attempt := range 8 {
		if err = write(); err == nil || !strings.Contains(err.Error(), "database is locked") {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
		}
	}
	return err
}
