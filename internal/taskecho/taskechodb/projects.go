package taskechodb

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/taskecho"
)

// Project reads one project by its external id (nil when there is none).
func (s *Store) Project(ctx context.Context, projectID string) (*taskecho.Project, error) {
	var p taskecho.Project
	err := s.projects.FindOne(ctx, bson.M{"project_id": projectID}).Decode(&p)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// UpdateProject sets fields of a project.
func (s *Store) UpdateProject(ctx context.Context, projectID string, set taskecho.Fields) (bool, error) {
	res, err := s.projects.UpdateOne(ctx, bson.M{"project_id": projectID}, bson.M{"$set": bson.M(set)})
	if err != nil {
		return false, err
	}
	return res.MatchedCount > 0, nil
}

// UpsertProject sets fields of a project, creating it with setOnInsert when absent.
func (s *Store) UpsertProject(ctx context.Context, projectID string, set, setOnInsert taskecho.Fields) error {
	upd := bson.M{"$set": bson.M(set), "$setOnInsert": bson.M(setOnInsert)}
	_, err := s.projects.UpdateOne(ctx, bson.M{"project_id": projectID}, upd, options.UpdateOne().SetUpsert(true))
	return err
}

// DeleteProject removes a project's tasks, its queues and the project, in that order.
func (s *Store) DeleteProject(ctx context.Context, projectID string) (int, int, error) {
	tasks, err := s.tasks.DeleteMany(ctx, bson.M{"project_id": projectID})
	if err != nil {
		return 0, 0, fmt.Errorf("delete project tasks: %w", err)
	}
	queues, err := s.queues.DeleteMany(ctx, bson.M{"project_id": projectID})
	if err != nil {
		return 0, 0, fmt.Errorf("delete project queues: %w", err)
	}
	if _, err := s.projects.DeleteOne(ctx, bson.M{"project_id": projectID}); err != nil {
		return 0, 0, fmt.Errorf("delete project: %w", err)
	}
	return int(tasks.DeletedCount), int(queues.DeletedCount), nil
}

// TaggedProjects reads the projects with at least one tag: one project by its key, or a scan of
// the (small) project registry when projectID is empty.
func (s *Store) TaggedProjects(ctx context.Context, projectID string) ([]taskecho.Project, error) {
	f, find := bson.M{"metadata.tags.0": bson.M{"$exists": true}}, mongox.DeliberateScan(ctx)
	if projectID != "" {
		f["project_id"], find = projectID, ctx
	}
	cur, err := s.projects.Find(find, f)
	if err != nil {
		return nil, err
	}
	var ps []taskecho.Project
	if err := cur.All(ctx, &ps); err != nil {
		return nil, fmt.Errorf("decode project tags: %w", err)
	}
	return ps, nil
}
