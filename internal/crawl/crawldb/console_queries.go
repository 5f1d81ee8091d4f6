package crawldb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/crawl"
)

// List returns one page of crawl tasks (optionally of one status), newest original_task_id
// first, and how many match: two commands whatever the collection's size. Read-only, for the
// operations console (api/ui).
func (s *Store) List(ctx context.Context, status string, skip, limit int64) ([]crawl.TaskRecord, int64, error) {
	q := bson.D{}
	if status != "" {
		q = append(q, bson.E{Key: "status", Value: status})
	}
	total, err := s.coll.CountDocuments(ctx, q)
	if err != nil {
		return nil, 0, fmt.Errorf("count crawl tasks: %w", err)
	}
	cur, err := s.coll.Find(ctx, q, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetSkip(skip).SetLimit(limit))
	if err != nil {
		return nil, 0, fmt.Errorf("list crawl tasks: %w", err)
	}
	var out []crawl.TaskRecord
	if err := cur.All(ctx, &out); err != nil {
		return nil, 0, fmt.Errorf("decode crawl tasks: %w", err)
	}
	return out, total, nil
}
