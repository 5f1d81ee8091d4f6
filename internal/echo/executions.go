package echo

import (
	"context"
	"math"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// CollExecutions holds one row per task execution: a status change from pending to done or
// error through a push or PATCH /tasks/status (TaskEcho's definition). The statistics endpoints
// aggregate these rows on read, so no breakdown can be lost the way TaskEcho's Mixed-path
// counters were.
const CollExecutions = "executions"

// Execution is one row of the executions collection.
type Execution struct {
	At          time.Time `bson:"at"`
	Date        string    `bson:"date"` // YYYY-MM-DD, UTC
	Hour        int       `bson:"hour"`
	ProjectID   string    `bson:"project_id"`
	ProjectName string    `bson:"project_name"`
	QueueID     string    `bson:"queue_id"`
	TaskID      string    `bson:"task_id"`
	Result      string    `bson:"result"` // success | failure
	ErrorType   string    `bson:"error_type,omitempty"`
	DurationMS  *int64    `bson:"duration_ms"` // since the task last became pending
	Hostname    string    `bson:"hostname"`
	APIKeyName  string    `bson:"api_key_name"`
}

// isExecution reports whether a status change counts as an execution.
func isExecution(from, to string) bool {
	return from == StatusPending && (to == StatusDone || to == StatusError)
}

// recordExecution writes one execution row; like the audit log, a failed write is logged.
func (s *Service) recordExecution(ctx context.Context, t *Task, to, projectName, hostname, keyName string, now time.Time) {
	e := Execution{At: now, Date: now.Format("2006-01-02"), Hour: now.Hour(), ProjectID: t.ProjectID, ProjectName: projectName,
		QueueID: deref(t.QueueID), TaskID: t.TaskID, Result: "success", Hostname: hostname, APIKeyName: keyName}
	if to == StatusError {
		e.Result, e.ErrorType = "failure", "other"
	}
	if t.PendingSince != nil {
		d := now.Sub(*t.PendingSince).Milliseconds()
		e.DurationMS = &d
	}
	if _, err := s.db.Collection(CollExecutions).InsertOne(ctx, e); err != nil {
		s.log.ErrorContext(ctx, "echo execution stats write failed", "project_id", t.ProjectID, "task_id", t.TaskID, "err", err)
	}
}

// StatsRange selects executions: dates are inclusive YYYY-MM-DD (UTC); ProjectID "" = all.
type StatsRange struct {
	Start, End string
	ProjectID  string
}

// Executions returns the rows in r.
func (s *Service) Executions(ctx context.Context, r StatsRange) ([]Execution, error) {
	f := bson.M{"date": bson.M{"$gte": r.Start, "$lte": r.End}}
	if r.ProjectID != "" {
		f["project_id"] = r.ProjectID
	}
	cur, err := s.db.Collection(CollExecutions).Find(ctx, f)
	if err != nil {
		return nil, wrap("read executions", err)
	}
	out := []Execution{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, wrap("decode executions", err)
	}
	return out, nil
}

// ExecSummary is TaskEcho's statistics summary.
type ExecSummary struct {
	TotalExecution int     `json:"total_execution"`
	TotalSuccess   int     `json:"total_success"`
	TotalFailure   int     `json:"total_failure"`
	SuccessRate    float64 `json:"success_rate"`
}

// ExecCounts is one bucket's {total, success, failure}.
type ExecCounts struct {
	Total   int `json:"total"`
	Success int `json:"success"`
	Failure int `json:"failure"`
}

func (c *ExecCounts) add(e Execution) {
	c.Total++
	if e.Result == "success" {
		c.Success++
	} else {
		c.Failure++
	}
}

// Summarize folds executions into a summary (success_rate 0–1, two decimals).
func Summarize(rows []Execution) ExecSummary {
	var c ExecCounts
	for _, e := range rows {
		c.add(e)
	}
	s := ExecSummary{TotalExecution: c.Total, TotalSuccess: c.Success, TotalFailure: c.Failure}
	if c.Total > 0 {
		s.SuccessRate = math.Round(float64(c.Success)/float64(c.Total)*100) / 100
	}
	return s
}

// Daily buckets executions by date for every day of r (empty days included).
func Daily(rows []Execution, r StatsRange) []map[string]any {
	by := map[string]*ExecCounts{}
	for _, e := range rows {
		if by[e.Date] == nil {
			by[e.Date] = &ExecCounts{}
		}
		by[e.Date].add(e)
	}
	start, _ := time.Parse("2006-01-02", r.Start)
	end, _ := time.Parse("2006-01-02", r.End)
	out := []map[string]any{}
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		key := d.Format("2006-01-02")
		c := ExecCounts{}
		if by[key] != nil {
			c = *by[key]
		}
		out = append(out, map[string]any{"date": key, "execution": c, "task_status": TaskStats{}})
	}
	return out
}

// GroupBy summarizes executions per key, largest total first.
func GroupBy(rows []Execution, key func(Execution) string) []KeyedSummary {
	groups := map[string][]Execution{}
	for _, e := range rows {
		groups[key(e)] = append(groups[key(e)], e)
	}
	out := make([]KeyedSummary, 0, len(groups))
	for k, g := range groups {
		out = append(out, KeyedSummary{Key: k, Name: g[len(g)-1].ProjectName, Summary: Summarize(g)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Summary.TotalExecution != out[j].Summary.TotalExecution {
			return out[i].Summary.TotalExecution > out[j].Summary.TotalExecution
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// KeyedSummary is one group of GroupBy (Name is the latest project name seen, for by-project).
type KeyedSummary struct {
	Key     string
	Name    string
	Summary ExecSummary
}
