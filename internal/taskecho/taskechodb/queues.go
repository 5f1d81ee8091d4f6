package taskechodb

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/taskecho"
)

func queueKey(projectID, queueID string) bson.M {
	return bson.M{"project_id": projectID, "queue_id": queueID}
}

// Queue reads one queue (nil when there is none).
func (s *Store) Queue(ctx context.Context, projectID, queueID string) (*taskecho.Queue, error) {
	var q taskecho.Queue
	err := s.queues.FindOne(ctx, queueKey(projectID, queueID)).Decode(&q)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &q, nil
}

// UpsertQueue sets fields of a queue, creating it with setOnInsert when absent.
func (s *Store) UpsertQueue(ctx context.Context, projectID, queueID string, set, setOnInsert taskecho.Fields) (bool, error) {
	upd := bson.M{"$set": bson.M(set), "$setOnInsert": bson.M(setOnInsert)}
	res, err := s.queues.UpdateOne(ctx, queueKey(projectID, queueID), upd, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return false, err
	}
	return res.UpsertedCount > 0, nil
}

// UpdateQueue sets fields of a queue.
func (s *Store) UpdateQueue(ctx context.Context, projectID, queueID string, set taskecho.Fields) error {
	_, err := s.queues.UpdateOne(ctx, queueKey(projectID, queueID), bson.M{"$set": bson.M(set)})
	return err
}

// DeleteQueue removes a queue's tasks, then the queue.
func (s *Store) DeleteQueue(ctx context.Context, projectID, queueID string) (int, error) {
	res, err := s.tasks.DeleteMany(ctx, queueKey(projectID, queueID))
	if err != nil {
		return 0, fmt.Errorf("delete queue tasks: %w", err)
	}
	if _, err := s.queues.DeleteOne(ctx, queueKey(projectID, queueID)); err != nil {
		return 0, fmt.Errorf("delete queue: %w", err)
	}
	return int(res.DeletedCount), nil
}
