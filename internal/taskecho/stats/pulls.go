package stats

import (
	"context"
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/taskecho"
)

// Pulls are the pull statistics (GET …/tasks/pull/stats) over a project's server tasks and the tasks pushed back after a pull.
type Pulls struct {
	TotalServerTasks int `json:"total_server_tasks"`
	NotPulled        int `json:"not_pulled"`
	Pulled           int `json:"pulled"`
	PulledNotPushed  int `json:"pulled_not_pushed"`
	TotalPulls       int `json:"total_pulls"`
	SuccessfulPulls  int `json:"successful_pulls"`
	TimedOut         int `json:"timed_out"`
	Released         int `json:"released"`
	// PullSuccessRate is TaskEcho's figure: the integer percent of server tasks pulled
	// (pulled / total_server_tasks × 100).
	PullSuccessRate int `json:"pull_success_rate"`
	// LeaseSuccessRate is the integer percent of ended leases that ended by push or confirm
	// (the pull success rate, which the alerts watch).
	LeaseSuccessRate int `json:"lease_success_rate"`
	// AveragePullDuration is the mean seconds from pull to push/confirm; nil without any.
	AveragePullDuration *float64 `json:"average_pull_duration"`
}

// ComputePulls derives the pull statistics from tasks (pure, so the arithmetic is unit-tested).
func ComputePulls(tasks []*taskecho.Task) Pulls {
	var st Pulls
	var durSum float64
	ended := 0
	for _, t := range tasks {
		if t.Source == taskecho.SourceServer {
			st.TotalServerTasks++
			if t.PulledAt == nil {
				st.NotPulled++
			} else {
				st.Pulled++
			}
		}
		if t.LeaseID != nil {
			st.PulledNotPushed++
		}
		for _, e := range t.PullHistory {
			st.TotalPulls++
			if e.ReleasedAt == nil {
				continue
			}
			ended++
			switch {
			case e.PushedAt != nil:
				st.SuccessfulPulls++
				durSum += e.PushedAt.Sub(e.PulledAt).Seconds()
			case deref(e.Reason) == taskecho.ReleaseTimeout:
				st.TimedOut++
			case deref(e.Reason) == taskecho.ReleaseClient:
				st.Released++
			}
		}
	}
	if ended > 0 {
		st.LeaseSuccessRate = int(math.Round(float64(st.SuccessfulPulls) / float64(ended) * 100))
	}
	if st.TotalServerTasks > 0 {
		st.PullSuccessRate = int(math.Round(float64(st.Pulled) / float64(st.TotalServerTasks) * 100))
	}
	if st.SuccessfulPulls > 0 {
		avg := math.Round(durSum/float64(st.SuccessfulPulls)*10) / 10
		st.AveragePullDuration = &avg
	}
	return st
}

// Pulls computes the pull statistics of a project.
func (s *Reader) Pulls(ctx context.Context, projectID string) (*Pulls, error) {
	f := bson.M{"project_id": projectID, "$or": bson.A{bson.M{"source": taskecho.SourceServer}, bson.M{"pulled_at": bson.M{"$ne": nil}}}}
	// One streamed query: the projection keeps each task small, and the batch size lets a
	// project's whole result travel in one reply (up to the server's 16 MiB per batch) instead of
	// a getMore per 101 tasks.
	opts := options.Find().SetProjection(bson.M{"source": 1, "pulled_at": 1, "lease_id": 1, "pull_history": 1}).
		SetBatchSize(statsBatchSize)
	cur, err := s.tasks.Find(ctx, f, opts)
	if err != nil {
		return nil, wrap("read pull stats", err)
	}
	var tasks []*taskecho.Task
	if err := cur.All(ctx, &tasks); err != nil {
		return nil, wrap("decode pull stats", err)
	}
	st := ComputePulls(tasks)
	return &st, nil
}

// statsBatchSize is the find batch size of the whole-project pull reads.
const statsBatchSize = 100_000

// PendingPulls lists tasks pulled more than timeout ago whose lease is still open (GET …/tasks/pull/pending), oldest
// pull first, and how many there are. limit > 0 returns only the first limit tasks (a page that
// shows a bounded list); 0 returns them all.
func (s *Reader) PendingPulls(ctx context.Context, projectID string, timeout time.Duration, limit int) ([]*taskecho.Task, int, error) {
	f := bson.M{"project_id": projectID, "lease_id": bson.M{"$ne": nil}, "pulled_at": bson.M{"$lte": s.now().Add(-timeout)}}
	opts := options.Find().SetSort(bson.D{{Key: "pulled_at", Value: 1}}).SetBatchSize(statsBatchSize)
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	cur, err := s.tasks.Find(ctx, f, opts)
	if err != nil {
		return nil, 0, wrap("read pending pulls", err)
	}
	out := []*taskecho.Task{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, 0, wrap("decode pending pulls", err)
	}
	if limit <= 0 || len(out) < limit {
		return out, len(out), nil
	}
	n, err := s.tasks.CountDocuments(ctx, f)
	if err != nil {
		return nil, 0, wrap("count pending pulls", err)
	}
	return out, int(n), nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
