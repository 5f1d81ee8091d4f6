package taskecho

import (
	"context"
	"errors"
	"time"
)

// Every write that depends on what was read is a guarded write (TaskWrite): it applies only to
// the revision it was read at, and bumps it. Of any writers that read the same revision exactly
// one applies; the others re-read and decide again. Appends (a message or a log line) do not
// depend on what was read and do not bump the revision, so they never make a guarded write lose.

// maxWriteAttempts bounds the re-read/re-write loop of a single-task write.
const maxWriteAttempts = 8

// writeTask changes one task with a guarded write. load reads its current version (and returns
// the domain error when it is absent); build returns the fields to set on that version, or nil to
// leave it unchanged. It returns the task as written.
func (c *core) writeTask(ctx context.Context, op string, load func(context.Context) (*Task, error),
	build func(*Task) (Fields, error)) (*Task, error) {
	return c.writeTaskWhere(ctx, op, load, func(t *Task) (Fields, *time.Time, error) {
		set, err := build(t)
		return set, nil, err
	})
}

// writeTaskWhere is writeTask whose build may also require the lease t holds to be live at an
// instant (leaseLiveAt). A write that condition stops is treated like one that lost the guard:
// the task is read again and build decides again on what it finds.
func (c *core) writeTaskWhere(ctx context.Context, op string, load func(context.Context) (*Task, error),
	build func(*Task) (set Fields, leaseLiveAt *time.Time, err error)) (*Task, error) {
	for range maxWriteAttempts {
		t, err := load(ctx)
		if err != nil {
			return nil, err
		}
		set, liveAt, err := build(t)
		if err != nil || set == nil {
			return t, err
		}
		out, err := c.store.WriteTask(ctx, TaskWrite{Task: t, Set: set, LeaseLiveAt: liveAt})
		if err != nil {
			return nil, mapWriteErr(op+" "+t.TaskID, err)
		}
		if out == nil {
			continue // another writer changed it since the read: decide again on the new version
		}
		return out, nil
	}
	return nil, conflict("任务正在被并发修改，请重试", map[string]any{"reason": errContended.Error()})
}

// mapWriteErr turns a duplicate key into the domain's duplicate error and wraps the rest.
func mapWriteErr(op string, err error) error {
	if errors.Is(err, ErrDuplicateKey) {
		return &Error{Kind: KindDuplicate, Message: "任务已存在", Details: map[string]any{}}
	}
	return wrap(op, err)
}

// writeSame applies the same fields to tasks with one guarded bulk write and returns the tasks
// whose write applied.
func (c *core) writeSame(ctx context.Context, op string, tasks []*Task, set Fields) ([]*Task, error) {
	ws := make([]TaskWrite, len(tasks))
	for i, t := range tasks {
		ws[i] = TaskWrite{Task: t, Set: cloneFields(set)}
	}
	return c.store.WriteTasks(ctx, op, ws)
}

func cloneFields(m Fields) Fields {
	out := make(Fields, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
