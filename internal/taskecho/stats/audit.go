package stats

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// AuditQuery filters GET /api/v1/audit.
type AuditQuery struct {
	ProjectID string
	Action    string
	Page      int
	PageSize  int
}

// Audit returns audit rows newest first and the total matching.
func (s *Reader) Audit(ctx context.Context, q AuditQuery) ([]taskecho.AuditEntry, int64, error) {
	f := bson.M{}
	if q.ProjectID != "" {
		f["project_id"] = q.ProjectID
	}
	if q.Action != "" {
		f["action"] = q.Action
	}
	total, err := s.audit.CountDocuments(ctx, f)
	if err != nil {
		return nil, 0, wrap("count audit log", err)
	}
	opts := options.Find().SetSort(bson.D{{Key: "at", Value: -1}, {Key: "_id", Value: -1}}).
		SetSkip(int64(q.Page-1) * int64(q.PageSize)).SetLimit(int64(q.PageSize))
	cur, err := s.audit.Find(ctx, f, opts)
	if err != nil {
		return nil, 0, wrap("read audit log", err)
	}
	out := []taskecho.AuditEntry{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, 0, wrap("decode audit log", err)
	}
	return out, total, nil
}
