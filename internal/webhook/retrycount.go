package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/taskloom/taskloom/internal/feishu"
)

// TaskStatuses a task-table update may set.
var TaskStatuses = []string{StatusPending, TaskDispatched, TaskRunning, StatusSuccess, StatusFailed, StatusError}

// ErrTaskNotFound is returned when a TaskID has no row.
var ErrTaskNotFound = errors.New("task not found")

// TaskUpdate is the task-table write for a status change.
type TaskUpdate struct {
	Status     string `json:"status"`
	RetryCount int    `json:"retry_count"`
}

// NextTaskStatus applies the task-table RetryCount rule to a status change of t:
// failed → running increments RetryCount in the same write; a task that is (or becomes)
// failed with RetryCount past MaxTaskRetries becomes error, so schedulers stop pulling it.
func NextTaskStatus(t Task, next string) (TaskUpdate, error) {
	if !slices.Contains(TaskStatuses, next) {
		return TaskUpdate{}, fmt.Errorf("status %q is not one of %v", next, TaskStatuses)
	}
	u := TaskUpdate{Status: next, RetryCount: t.RetryCount}
	if t.Status == StatusFailed && next == TaskRunning {
		u.RetryCount++
	}
	if u.Status == StatusFailed && u.RetryCount > MaxTaskRetries {
		u.Status = StatusError
	}
	return u, nil
}

// SetTaskStatus reads the task, applies NextTaskStatus and writes Status and RetryCount in one
// update.
func (t *Tables) SetTaskStatus(ctx context.Context, taskID, next string) (TaskUpdate, error) {
	found, err := t.Tasks(ctx, []string{taskID})
	if err != nil {
		return TaskUpdate{}, err
	}
	tk, ok := found[taskID]
	if !ok {
		return TaskUpdate{}, fmt.Errorf("task %s: %w", taskID, ErrTaskNotFound)
	}
	u, err := NextTaskStatus(tk, next)
	if err != nil {
		return TaskUpdate{}, err
	}
	err = t.Client.Update(ctx, t.Task, tk.RecordID, map[string]any{t.F.Task.Status: u.Status, t.F.Task.RetryCount: u.RetryCount})
	if err != nil {
		return TaskUpdate{}, fmt.Errorf("update task %s: %w", taskID, err)
	}
	return u, nil
}

// EscalateFailedTasks marks failed tasks whose RetryCount is past MaxTaskRetries as error.
func (t *Tables) EscalateFailedTasks(ctx context.Context) (int, error) {
	tf := t.F.Task
	recs, err := t.Client.Search(ctx, t.Task, feishu.SearchOptions{Filter: feishu.And([]feishu.Condition{
		feishu.Is(tf.Status, StatusFailed), {FieldName: tf.RetryCount, Operator: feishu.OpIsGreater, Value: []string{fmt.Sprint(MaxTaskRetries)}},
	}), FieldNames: []string{tf.TaskID}})
	if err != nil {
		return 0, fmt.Errorf("find exhausted failed tasks: %w", err)
	}
	upd := make([]feishu.Record, len(recs))
	for i, r := range recs {
		upd[i] = feishu.Record{ID: r.ID, Fields: map[string]any{tf.Status: StatusError}}
	}
	if err := t.Client.BatchUpdate(ctx, t.Task, upd); err != nil {
		return 0, fmt.Errorf("mark exhausted tasks error: %w", err)
	}
	return len(upd), nil
}
