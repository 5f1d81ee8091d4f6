package taskecho

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

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
	// it exists, else the task of that id in the first queue holding one (the seed's project-wide
	// task routes); without AnyQueue only the project-level task.
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

// findTask loads the task ref names. Soft-deleted tasks are found only with includeDeleted.
func (s *Service) findTask(ctx context.Context, ref TaskRef, includeDeleted bool) (*Task, error) {
	f := bson.M{"project_id": ref.ProjectID, "task_id": ref.TaskID}
	switch {
	case ref.QueueID != nil:
		f = bson.M{"key": TaskKey(ref.ProjectID, ref.QueueID, ref.TaskID)}
	case !ref.AnyQueue:
		f["queue_id"] = nil
	}
	if !includeDeleted {
		f["deleted_at"] = nil
	}
	opts := options.FindOne()
	if ref.QueueID == nil {
		// Mongo sorts null before strings, so the project-level task comes first. (A key names
		// one task: it needs no order.)
		opts.SetSort(bson.D{{Key: "queue_id", Value: 1}})
	}
	var t Task
	err := s.tasks.FindOne(ctx, f, opts).Decode(&t)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, taskNotFound(ref.details())
	}
	if err != nil {
		return nil, wrap("find task "+ref.TaskID, err)
	}
	return &t, nil
}

// findTasks reads every task matching filter; what names them in errors.
func (s *Service) findTasks(ctx context.Context, what string, filter any, opts ...options.Lister[options.FindOptions]) ([]*Task, error) {
	cur, err := s.tasks.Find(ctx, filter, opts...)
	if err != nil {
		return nil, wrap("find "+what, err)
	}
	var out []*Task
	if err := cur.All(ctx, &out); err != nil {
		return nil, wrap("read "+what, err)
	}
	return out, nil
}

// Task returns one task (soft-deleted included when includeDeleted).
func (s *Service) Task(ctx context.Context, ref TaskRef, includeDeleted bool) (*Task, error) {
	return s.findTask(ctx, ref, includeDeleted)
}

// Project returns one project by its external id.
func (s *Service) Project(ctx context.Context, projectID string) (*Project, error) {
	var p Project
	err := s.projects.FindOne(ctx, bson.M{"project_id": projectID}).Decode(&p)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, projectNotFound(projectID)
	}
	if err != nil {
		return nil, wrap("find project "+projectID, err)
	}
	return &p, nil
}

// Queue returns one queue; notFoundDetails are the details of its 404 (they vary per route in
// TaskEcho).
func (s *Service) Queue(ctx context.Context, projectID, queueID string, notFoundDetails map[string]any) (*Queue, error) {
	var q Queue
	err := s.queues.FindOne(ctx, bson.M{"project_id": projectID, "queue_id": queueID}).Decode(&q)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, queueNotFound(notFoundDetails)
	}
	if err != nil {
		return nil, wrap("find queue "+queueID, err)
	}
	return &q, nil
}

// ProjectQueue checks that the project and the queue exist.
func (s *Service) ProjectQueue(ctx context.Context, projectID, queueID string, notFoundDetails map[string]any) (*Project, *Queue, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return nil, nil, err
	}
	q, err := s.Queue(ctx, projectID, queueID, notFoundDetails)
	if err != nil {
		return nil, nil, err
	}
	return p, q, nil
}
