package taskecho

import "context"

// keySep joins the parts of Task.Key; ids are validated strings that cannot usefully contain it.
const keySep = "\x1f"

// TaskKey is the unique key of a task: project, queue ("" at project level) and task id.
func TaskKey(projectID string, queueID *string, taskID string) string {
	q := ""
	if queueID != nil {
		q = *queueID
	}
	return projectID + keySep + q + keySep + taskID
}

// TaskRef addresses one task.
type TaskRef struct {
	ProjectID string
	TaskID    string
	// QueueID names the task's queue. When nil: with AnyQueue the project-level task is used if
	// it exists, else the task of that id in the first queue holding one (the project-wide task
	// routes); without AnyQueue only the project-level task.
	QueueID  *string
	AnyQueue bool
}

func (r TaskRef) details() map[string]any {
	d := map[string]any{"project_id": r.ProjectID, "task_id": r.TaskID}
	if r.QueueID != nil {
		d["queue_id"] = *r.QueueID
	}
	return d
}

// Lookup reads one project, queue or task by its id.
type Lookup struct{ *core }

// findTask loads the task ref names. Soft-deleted tasks are found only with includeDeleted.
func (c *core) findTask(ctx context.Context, ref TaskRef, includeDeleted bool) (*Task, error) {
	t, err := c.store.Task(ctx, ref, includeDeleted)
	if err != nil {
		return nil, wrap("find task "+ref.TaskID, err)
	}
	if t == nil {
		return nil, taskNotFound(ref.details())
	}
	return t, nil
}

// Task returns one task (soft-deleted included when includeDeleted).
func (l *Lookup) Task(ctx context.Context, ref TaskRef, includeDeleted bool) (*Task, error) {
	return l.findTask(ctx, ref, includeDeleted)
}

// Project returns one project by its external id.
func (l *Lookup) Project(ctx context.Context, projectID string) (*Project, error) {
	return l.project(ctx, projectID)
}

func (c *core) project(ctx context.Context, projectID string) (*Project, error) {
	p, err := c.store.Project(ctx, projectID)
	if err != nil {
		return nil, wrap("find project "+projectID, err)
	}
	if p == nil {
		return nil, projectNotFound(projectID)
	}
	return p, nil
}

// Queue returns one queue; notFoundDetails are the details of its 404 (they vary per route in
// TaskEcho).
func (l *Lookup) Queue(ctx context.Context, projectID, queueID string, notFoundDetails map[string]any) (*Queue, error) {
	return l.queue(ctx, projectID, queueID, notFoundDetails)
}

func (c *core) queue(ctx context.Context, projectID, queueID string, notFoundDetails map[string]any) (*Queue, error) {
	q, err := c.store.Queue(ctx, projectID, queueID)
	if err != nil {
		return nil, wrap("find queue "+queueID, err)
	}
	if q == nil {
		return nil, queueNotFound(notFoundDetails)
	}
	return q, nil
}

// ProjectQueue checks that the project and the queue exist.
func (l *Lookup) ProjectQueue(ctx context.Context, projectID, queueID string, notFoundDetails map[string]any) (*Project, *Queue, error) {
	return l.projectQueue(ctx, projectID, queueID, notFoundDetails)
}

func (c *core) projectQueue(ctx context.Context, projectID, queueID string, notFoundDetails map[string]any) (*Project, *Queue, error) {
	p, err := c.project(ctx, projectID)
	if err != nil {
		return nil, nil, err
	}
	q, err := c.queue(ctx, projectID, queueID, notFoundDetails)
	if err != nil {
		return nil, nil, err
	}
	return p, q, nil
}
