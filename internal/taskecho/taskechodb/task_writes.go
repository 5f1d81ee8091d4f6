package taskechodb

import (
	"time"

	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// A guarded write's filter names the task's _id and the revision it was read at, and its update
// bumps rev. MongoDB applies a single-document update atomically, so of any writers that read the
// same revision exactly one matches; the others match nothing and the domain re-reads.

// guard is the filter of w: the revision read, and, with LeaseLiveAt, the lease still held and
// unexpired at that instant.
func guard(w taskecho.TaskWrite) bson.M {
	g := bson.M{"_id": w.Task.ID, "rev": w.Task.Rev}
	if w.LeaseLiveAt != nil {
		g["lease_id"] = *w.Task.LeaseID
		g["lease_expires_at"] = bson.M{"$gt": *w.LeaseLiveAt}
	}
	return g
}

// update is w's update document: its fields set, its history entry pushed, the revision bumped.
func update(w taskecho.TaskWrite) bson.M {
	set := bson.M{}
	for k, v := range w.Set {
		set[k] = v
	}
	u := bson.M{"$set": set, "$inc": bson.M{"rev": 1}}
	if w.PushHistory != nil {
		u["$push"] = bson.M{"pull_history": *w.PushHistory}
	}
	return u
}

// dupKey marks a duplicate-key error as taskecho.ErrDuplicateKey.
func dupKey(err error) error {
	if mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("%w: %w", taskecho.ErrDuplicateKey, err)
	}
	return err
}

// InsertTask inserts a new task and returns its id.
func (s *Store) InsertTask(ctx context.Context, t *taskecho.Task) (taskecho.ID, error) {
	res, err := s.tasks.InsertOne(ctx, t)
	if err != nil {
		return taskecho.ID{}, dupKey(err)
	}
	return taskecho.ID(res.InsertedID.(bson.ObjectID)), nil
}

// WriteTask applies w with one findOneAndUpdate and returns the post-image, or nil when the guard
// matched nothing.
func (s *Store) WriteTask(ctx context.Context, w taskecho.TaskWrite) (*taskecho.Task, error) {
	var out taskecho.Task
	err := s.tasks.FindOneAndUpdate(ctx, guard(w), update(w),
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, dupKey(err)
	}
	return &out, nil
}

// writeMarker is the field a bulk write stamps with its own id, so that when some of its guarded
// statements matched nothing a re-read can tell exactly which applied.
const writeMarker = "write_id"

// WriteTasks applies ws in one unordered bulk write, each statement guarded on the revision its
// task was read at, and returns the tasks whose write applied. When every statement matched
// that is all of them, at the cost of the one command; otherwise one find by the write's marker
// says which.
func (s *Store) WriteTasks(ctx context.Context, op string, ws []taskecho.TaskWrite) ([]*taskecho.Task, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	marker := taskecho.NewID().Hex()
	models := make([]mongo.WriteModel, len(ws))
	ids := make(bson.A, len(ws))
	for i, w := range ws {
		upd := update(w)
		upd["$set"].(bson.M)[writeMarker] = marker
		models[i] = mongo.NewUpdateOneModel().SetFilter(guard(w)).SetUpdate(upd)
		ids[i] = w.Task.ID
	}
	res, err := s.tasks.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	all := make([]*taskecho.Task, len(ws))
	for i, w := range ws {
		all[i] = w.Task
	}
	if int(res.MatchedCount) == len(ws) {
		return all, nil
	}
	applied, err := s.findTasks(ctx, op+" (applied)", bson.M{"_id": bson.M{"$in": ids}, writeMarker: marker},
		options.Find().SetProjection(bson.M{"_id": 1}))
	if err != nil {
		return nil, err
	}
	got := make(map[taskecho.ID]bool, len(applied))
	for _, t := range applied {
		got[t.ID] = true
	}
	won := all[:0:0]
	for _, t := range all {
		if got[t.ID] {
			won = append(won, t)
		}
	}
	return won, nil
}

// WritePush applies a push's statements in one unordered bulk write: inserts race on the unique
// key, updates are guarded on the revision read. complete is true when every statement applied.
// A statement that lost its guard, or an insert that met a task a concurrent push created, makes
// it false without an error: the caller re-reads and writes what is still to do.
func (s *Store) WritePush(ctx context.Context, ws []taskecho.PushWrite) (bool, error) {
	models := make([]mongo.WriteModel, len(ws))
	for i, w := range ws {
		if w.Insert != nil {
			models[i] = mongo.NewInsertOneModel().SetDocument(w.Insert)
			continue
		}
		models[i] = mongo.NewUpdateOneModel().SetFilter(guard(w.Write)).SetUpdate(update(w.Write))
	}
	res, err := s.pushBulk(ctx, models)
	if err != nil {
		var bwe mongo.BulkWriteException
		if !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
			return false, err
		}
		for _, we := range bwe.WriteErrors {
			if !mongo.IsDuplicateKeyError(we) {
				return false, err
			}
		}
		return false, nil
	}
	return int(res.MatchedCount+res.InsertedCount) == len(models), nil
}

// pushBulk is the one command that writes a push's tasks.
func (s *Store) pushBulk(ctx context.Context, models []mongo.WriteModel) (*mongo.BulkWriteResult, error) {
	return s.tasks.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
}

// Append $pushes entry onto the task's array field and $incs its counter seqField in the same
// single-document update, so the counter's new value is the entry's position: a gap-free,
// server-assigned id, whatever the number of concurrent appends. Nothing is read first, so an
// append never conflicts with another write. found is false when no task of key has the counter
// (none at all, or one written before the counters existed). The update also sets
// <seqField>_touched_sec to at's Unix second; the pre-image tells whether it changed (first).
func (s *Store) Append(ctx context.Context, key, field, seqField string, entry any, at time.Time) (int64, bool, bool, error) {
	// The whole pre-image comes back: a projection ({seqField: 1, touched: 1}) would carry less,
	// but the embedded database does not implement findAndModify's "fields" yet. The counter's
	// new value is the pre-image's plus one (the filter requires it to exist).
	touched, sec := seqField+"_touched_sec", at.Unix()
	opts := options.FindOneAndUpdate().SetReturnDocument(options.Before)
	var before bson.M
	err := s.tasks.FindOneAndUpdate(ctx, bson.M{"key": key, seqField: bson.M{"$exists": true}},
		bson.M{"$push": bson.M{field: entry}, "$inc": bson.M{seqField: 1}, "$set": bson.M{touched: sec}}, opts).Decode(&before)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, false, false, nil
	}
	if err != nil {
		return 0, false, false, err
	}
	n, _ := asInt64(before[seqField])
	last, stamped := asInt64(before[touched])
	return n + 1, !stamped || last != sec, true, nil
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// StartCounter gives a task written before the append counters existed its counter (the length
// of its array), guarded on that length.
func (s *Store) StartCounter(ctx context.Context, id taskecho.ID, field, seqField string, n int) error {
	_, err := s.tasks.UpdateOne(ctx, bson.M{"_id": id, seqField: bson.M{"$exists": false}, field: bson.M{"$size": n}},
		bson.M{"$set": bson.M{seqField: n}})
	return err
}
