package webhook

import (
	"errors"
	"fmt"
	"slices"
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
