package stats

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/alert"
)

// CheckAlerts evaluates the alert rules over the audit log of the last window and logs breaches.
func (s *Reader) CheckAlerts(ctx context.Context, th alert.Thresholds) (*alert.Report, error) {
	since := s.now().Add(-th.Window)
	cur, err := s.audit.Find(ctx, bson.M{"at": bson.M{"$gte": since}})
	if err != nil {
		return nil, wrap("read audit for alerts", err)
	}
	var rows []taskecho.AuditEntry
	if err := cur.All(ctx, &rows); err != nil {
		return nil, wrap("decode audit for alerts", err)
	}
	r := &alert.Report{Breaches: []string{}}
	for _, e := range rows {
		switch {
		case e.Action == "confirm" || e.Action == "push-close":
			r.Successes += e.Count
		case e.Action == "release":
			r.Failures += e.Count
		case e.Action == "lease-timeout":
			r.Failures += e.Count
			r.Timeouts += e.Count
		case strings.HasPrefix(e.Action, "queue-"):
			r.QueueOps++
		}
	}
	if total := r.Successes + r.Failures; th.MinSuccessRate > 0 && total > 0 {
		if rate := float64(r.Successes) / float64(total); rate < th.MinSuccessRate {
			r.Breaches = append(r.Breaches, "pull_success_rate_low")
			s.log.WarnContext(ctx, "echo alert: pull success rate below threshold", "alert", "pull_success_rate_low",
				"rate", rate, "threshold", th.MinSuccessRate, "window", th.Window.String())
		}
	}
	if th.MaxTimeouts > 0 && r.Timeouts > th.MaxTimeouts {
		r.Breaches = append(r.Breaches, "pull_timeouts_high")
		s.log.WarnContext(ctx, "echo alert: pull timeouts above threshold", "alert", "pull_timeouts_high",
			"timeouts", r.Timeouts, "threshold", th.MaxTimeouts, "window", th.Window.String())
	}
	if th.MaxQueueOps > 0 && r.QueueOps > th.MaxQueueOps {
		r.Breaches = append(r.Breaches, "queue_operations_high")
		s.log.WarnContext(ctx, "echo alert: queue operations above threshold", "alert", "queue_operations_high",
			"operations", r.QueueOps, "threshold", th.MaxQueueOps, "window", th.Window.String())
	}
	return r, nil
}
