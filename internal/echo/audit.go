package echo

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// recordAudit appends one audit_log row. The operation it describes has already happened, so a
// failed audit write is logged at error level rather than turned into a failed request.
func (s *Service) recordAudit(ctx context.Context, e AuditEntry) {
	if e.At.IsZero() {
		e.At = s.now()
	}
	if e.TaskIDs == nil {
		e.TaskIDs = []string{}
	}
	if _, err := s.audit.InsertOne(ctx, e); err != nil {
		s.log.ErrorContext(ctx, "echo audit write failed", "action", e.Action, "project_id", e.ProjectID, "err", err)
	}
}

// AuditQuery filters GET /api/v1/audit.
type AuditQuery struct {
	ProjectID string
	Action    string
	Page      int
	PageSize  int
}

// ListAudit returns audit rows newest first and the total matching.
func (s *Service) ListAudit(ctx context.Context, q AuditQuery) ([]AuditEntry, int64, error) {
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
		SetSkip(int64((q.Page - 1) * q.PageSize)).SetLimit(int64(q.PageSize))
	cur, err := s.audit.Find(ctx, f, opts)
	if err != nil {
		return nil, 0, wrap("read audit log", err)
	}
	out := []AuditEntry{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, 0, wrap("decode audit log", err)
	}
	return out, total, nil
}
