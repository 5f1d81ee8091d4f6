package taskechodb

import (
	"context"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// InsertAudit appends one audit_log row.
func (s *Store) InsertAudit(ctx context.Context, e taskecho.AuditEntry) error {
	_, err := s.audit.InsertOne(ctx, e)
	return err
}

// InsertExecution appends one executions row.
func (s *Store) InsertExecution(ctx context.Context, e taskecho.Execution) error {
	_, err := s.executions.InsertOne(ctx, e)
	return err
}
