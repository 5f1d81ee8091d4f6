package taskecho

import (
	"context"
	"errors"
	"time"

	"github.com/taskloom/taskloom/internal/taskecho/queueop"
)

// Store is what the task server needs from its database: the documents of projects, queues and
// tasks, and the audit and execution records. Package taskechodb implements it on MongoDB, to
// the store rule: every change that depends on what was read is a single-document write guarded
// by the revision it read, and several of them go as one bulk write whose statements each carry
// their own guard.
type Store interface {
	TaskStore
	ProjectStore
	QueueStore
	RecordStore
}

// Fields are the document fields a write sets, by their stored names (the model's bson names).
type Fields map[string]any

// TaskWrite is one guarded write of a task as it was read: it applies only while the task still
// has Task's revision (and, with LeaseLiveAt, still holds Task's lease unexpired at that instant),
// and bumps the revision.
type TaskWrite struct {
	Task *Task
	Set  Fields
	// PushHistory, when set, is appended to pull_history.
	PushHistory *PullEntry
	// LeaseLiveAt, when set, adds to the guard: lease_id is still Task.LeaseID and
	// lease_expires_at is after LeaseLiveAt.
	LeaseLiveAt *time.Time
}

// PushWrite is one statement of a push's bulk write: an insert of a new task, or a guarded write.
type PushWrite struct {
	Insert *Task
	Write  TaskWrite
}

// ErrDuplicateKey is what a store's error wraps when a write met a unique index (a task of that
// key exists already).
var ErrDuplicateKey = errors.New("duplicate key")

// TaskStore reads and writes tasks. A read that finds nothing answers nil (no error).
type TaskStore interface {
	// Task reads the task ref names; without QueueID and with AnyQueue, the project-level task
	// first, else the first queue's in queue_id order.
	Task(ctx context.Context, ref TaskRef, includeDeleted bool) (*Task, error)
	// ListedTasks are the live tasks of a project whose task_id is among ids, in every queue.
	ListedTasks(ctx context.Context, projectID string, ids []string) ([]*Task, error)
	// LeaseTasks are the live tasks of a project that hold lease leaseID.
	LeaseTasks(ctx context.Context, projectID, leaseID string) ([]*Task, error)
	// QueueTasks are every task of a queue, deleted ones included.
	QueueTasks(ctx context.Context, projectID, queueID string) ([]*Task, error)
	// PullCandidates reads up to window tasks f may claim at now, in pull order (highest
	// priority_rank, then oldest, then _id).
	PullCandidates(ctx context.Context, f PullFilter, now time.Time, window int) ([]*Task, error)
	// ExpiredLeases reads up to limit tasks whose lease expired by now, oldest expiry first.
	ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]*Task, error)
	// CountExpiredLeases counts the tasks whose lease expired by now.
	CountExpiredLeases(ctx context.Context, now time.Time) (int, error)
	// ExpiredTasks reads up to limit live, unleased, unarchived server tasks past expires_at.
	ExpiredTasks(ctx context.Context, now time.Time, limit int) ([]*Task, error)

	// InsertTask inserts a new task and returns its id.
	InsertTask(ctx context.Context, t *Task) (ID, error)
	// WriteTask applies w and returns the task as written, or nil when its guard matched nothing.
	WriteTask(ctx context.Context, w TaskWrite) (*Task, error)
	// WriteTasks applies ws in one unordered bulk write and returns the tasks (as read) whose
	// write applied.
	WriteTasks(ctx context.Context, op string, ws []TaskWrite) ([]*Task, error)
	// WritePush applies a push's statements in one unordered bulk write. complete is true when
	// every statement applied; a statement that lost its guard or met a task a concurrent push
	// created answers false without an error (the caller re-reads).
	WritePush(ctx context.Context, ws []PushWrite) (complete bool, err error)
	// Append pushes entry onto the task's array field and increments its counter seqField in one
	// update, and returns the counter's new value; found is false when no task of key has the
	// counter. The same update stamps the task with at's Unix second (a field of its own per
	// seqField); first is true when the stamp changed, i.e. this is the task's first append of
	// that kind in that second.
	Append(ctx context.Context, key, field, seqField string, entry any, at time.Time) (seq int64, first, found bool, err error)
	// StartCounter gives task id the counter seqField = n while it has none and field holds n
	// entries.
	StartCounter(ctx context.Context, id ID, field, seqField string, n int) error

	// CountQueueOp counts the tasks op touches.
	CountQueueOp(ctx context.Context, op queueop.Op) (int, error)
	// QueueOpTasks reads the next limit tasks op touches after id after, in _id order.
	QueueOpTasks(ctx context.Context, op queueop.Op, after ID, limit int) ([]*Task, error)
	// CountQueueOpApplied counts the tasks in (after, last] op has reset (pending_since = op.At).
	CountQueueOpApplied(ctx context.Context, op queueop.Op, after, last ID) (int, error)
	// QueueOpPending reads the tasks among ids op touches and has not reset yet.
	QueueOpPending(ctx context.Context, op queueop.Op, ids []ID) ([]*Task, error)
}

// ProjectStore reads and writes projects.
type ProjectStore interface {
	Project(ctx context.Context, projectID string) (*Project, error)
	// UpdateProject sets fields of a project; matched is false when there is none.
	UpdateProject(ctx context.Context, projectID string, set Fields) (matched bool, err error)
	// UpsertProject sets fields of a project, creating it with setOnInsert when absent.
	UpsertProject(ctx context.Context, projectID string, set, setOnInsert Fields) error
	// DeleteProject removes a project with its tasks and queues and counts what went.
	DeleteProject(ctx context.Context, projectID string) (tasks, queues int, err error)
	// TaggedProjects reads the projects with at least one tag: every one, or only projectID when
	// it is not empty.
	TaggedProjects(ctx context.Context, projectID string) ([]Project, error)
}

// QueueStore reads and writes queues.
type QueueStore interface {
	Queue(ctx context.Context, projectID, queueID string) (*Queue, error)
	// UpsertQueue sets fields of a queue, creating it with setOnInsert when absent (created).
	UpsertQueue(ctx context.Context, projectID, queueID string, set, setOnInsert Fields) (created bool, err error)
	// UpdateQueue sets fields of a queue (none when it does not exist).
	UpdateQueue(ctx context.Context, projectID, queueID string, set Fields) error
	// DeleteQueue removes a queue with its tasks and counts the tasks.
	DeleteQueue(ctx context.Context, projectID, queueID string) (tasks int, err error)
}

// RecordStore appends the audit log and the execution rows.
type RecordStore interface {
	InsertAudit(ctx context.Context, e AuditEntry) error
	InsertExecution(ctx context.Context, e Execution) error
}
