package taskecho

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Every write that depends on what was read is a guarded write: its filter names the task's _id
// and the revision it was read at, and the update bumps rev. MongoDB applies a single-document
// update atomically, so of any writers that read the same revision exactly one matches; the
// others match nothing, re-read and decide again. Appends ($push of a message or log line) do not
// depend on what was read and do not bump rev, so they never make a guarded write lose.

// maxWriteAttempts bounds the re-read/re-write loop of a single-task write.
const maxWriteAttempts = 8

// revGuard is the filter of a write to t as it was read.
func revGuard(t *Task) bson.M { return bson.M{"_id": t.ID, "rev": t.Rev} }

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

// writeTask changes one task with a guarded write. load reads its current version (and returns
// the domain error when it is absent); build returns the update for that version, or nil to leave
// it unchanged. It returns the task as written (the update's post-image: one round trip).
func (s *Service) writeTask(ctx context.Context, op string, load func(context.Context) (*Task, error),
	build func(*Task) (bson.M, error)) (*Task, error) {
	return s.writeTaskWhere(ctx, op, load, func(t *Task) (bson.M, bson.M, error) {
		update, err := build(t)
		return update, nil, err
	})
}

// writeTaskWhere is writeTask whose build also returns conditions (where) the write's filter adds
// to the revision guard. A write they stop is treated like one that lost the guard: the task is
// read again and build decides again on what it finds.
func (s *Service) writeTaskWhere(ctx context.Context, op string, load func(context.Context) (*Task, error),
	build func(*Task) (update, where bson.M, err error)) (*Task, error) {
	for range maxWriteAttempts {
		t, err := load(ctx)
		if err != nil {
			return nil, err
		}
		update, where, err := build(t)
		if err != nil || update == nil {
			return t, err
		}
		var out Task
		err = s.tasks.FindOneAndUpdate(ctx, guardWhere(t, where), withRevInc(update),
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&out)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue // another writer changed it since the read: decide again on the new version
		}
		if err != nil {
			return nil, mapWriteErr(op+" "+t.TaskID, err)
		}
		return &out, nil
	}
	return nil, conflict("任务正在被并发修改，请重试", map[string]any{"reason": errContended.Error()})
}

// guardWhere is t's revision guard with the extra conditions where.
func guardWhere(t *Task, where bson.M) bson.M {
	g := revGuard(t)
	for k, v := range where {
		g[k] = v
	}
	return g
}

// mapWriteErr turns a duplicate key into the domain's duplicate error and wraps the rest.
func mapWriteErr(op string, err error) error {
	if mongo.IsDuplicateKeyError(err) {
		return &Error{Kind: KindDuplicate, Message: "任务已存在", Details: map[string]any{}}
	}
	return wrap(op, err)
}

// taskUpdate is one guarded per-task write of a bulk operation; where, when set, adds
// conditions to its revision guard.
type taskUpdate struct {
	task   *Task
	update bson.M
	where  bson.M
}

// writeMarker is the field a bulk write stamps with its own id, so that when some of its guarded
// statements matched nothing a re-read can tell exactly which applied.
const writeMarker = "write_id"

// bulkGuarded applies ups in one unordered bulk write, each statement guarded on the revision its
// task was read at, and returns the tasks whose write applied. When every statement matched
// that is all of them, at the cost of the one command; otherwise one find by the write's marker
// says which.
func (s *Service) bulkGuarded(ctx context.Context, op string, ups []taskUpdate) ([]*Task, error) {
	if len(ups) == 0 {
		return nil, nil
	}
	marker := newLeaseID()
	models := make([]mongo.WriteModel, len(ups))
	ids := make(bson.A, len(ups))
	for i, u := range ups {
		upd := withRevInc(u.update)
		set, _ := upd["$set"].(bson.M)
		if set == nil {
			set = bson.M{}
			upd["$set"] = set
		}
		set[writeMarker] = marker
		models[i] = mongo.NewUpdateOneModel().SetFilter(guardWhere(u.task, u.where)).SetUpdate(upd)
		ids[i] = u.task.ID
	}
	res, err := s.tasks.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err != nil {
		return nil, wrap(op, err)
	}
	all := make([]*Task, len(ups))
	for i, u := range ups {
		all[i] = u.task
	}
	if int(res.MatchedCount) == len(ups) {
		return all, nil
	}
	applied, err := s.findTasks(ctx, op+" (applied)", bson.M{"_id": bson.M{"$in": ids}, writeMarker: marker},
		options.Find().SetProjection(bson.M{"_id": 1}))
	if err != nil {
		return nil, err
	}
	got := make(map[bson.ObjectID]bool, len(applied))
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

// bulkSame applies the same update to tasks with bulkGuarded.
func (s *Service) bulkSame(ctx context.Context, op string, tasks []*Task, update bson.M) ([]*Task, error) {
	ups := make([]taskUpdate, len(tasks))
	for i, t := range tasks {
		u := bson.M{}
		for k, v := range update {
			if m, ok := v.(bson.M); ok {
				v = cloneM(m)
			}
			u[k] = v
		}
		ups[i] = taskUpdate{task: t, update: u}
	}
	return s.bulkGuarded(ctx, op, ups)
}

func cloneM(m bson.M) bson.M {
	out := make(bson.M, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
