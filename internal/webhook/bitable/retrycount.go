package bitable

import (
	"context"
	"fmt"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
)

// SetTaskStatus reads the task, applies NextTaskStatus and writes Status and RetryCount in one
// update.
func (t *Tables) SetTaskStatus(ctx context.Context, taskID, next string) (webhook.TaskUpdate, error) {
	found, err := t.Tasks(ctx, []string{taskID})
	if err != nil {
		return webhook.TaskUpdate{}, err
	}
	tk, ok := found[taskID]
	if !ok {
		return webhook.TaskUpdate{}, fmt.Errorf("task %s: %w", taskID, webhook.ErrTaskNotFound)
	}
	u, err := webhook.NextTaskStatus(tk, next)
	if err != nil {
		return webhook.TaskUpdate{}, err
	}
	err = t.Client.Update(ctx, t.Task, tk.RecordID, map[string]any{t.F.Task.Status: u.Status, t.F.Task.RetryCount: u.RetryCount})
	if err != nil {
		return webhook.TaskUpdate{}, fmt.Errorf("update task %s: %w", taskID, err)
	}
	return u, nil
}

// EscalateFailedTasks marks failed tasks whose RetryCount is past MaxTaskRetries as error.
func (t *Tables) EscalateFailedTasks(ctx context.Context) (int, error) {
	tf := t.F.Task
	recs, err := t.Client.Search(ctx, t.Task, feishu.SearchOptions{Filter: feishu.And([]feishu.Condition{
		feishu.Is(tf.Status, webhook.StatusFailed), {FieldName: tf.RetryCount, Operator: feishu.OpIsGreater, Value: []string{fmt.Sprint(webhook.MaxTaskRetries)}},
	}), FieldNames: []string{tf.TaskID}})
	if err != nil {
		return 0, fmt.Errorf("find exhausted failed tasks: %w", err)
	}
	upd := make([]feishu.Record, len(recs))
	for i, r := range recs {
		upd[i] = feishu.Record{ID: r.ID, Fields: map[string]any{tf.Status: webhook.StatusError}}
	}
	if err := t.Client.BatchUpdate(ctx, t.Task, upd); err != nil {
		return 0, fmt.Errorf("mark exhausted tasks error: %w", err)
	}
	return len(upd), nil
}
