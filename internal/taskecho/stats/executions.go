package stats

import (
	"context"
	"math"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

// Range selects executions: dates are inclusive YYYY-MM-DD (UTC); ProjectID "" = all.
type Range struct {
	Start, End string
	ProjectID  string
}

// Executions returns the rows in r.
func (s *Reader) Executions(ctx context.Context, r Range) ([]taskecho.Execution, error) {
	f := bson.M{"date": bson.M{"$gte": r.Start, "$lte": r.End}}
	if r.ProjectID != "" {
		f["project_id"] = r.ProjectID
	}
	cur, err := s.executions.Find(ctx, f)
	if err != nil {
		return nil, wrap("read executions", err)
	}
	out := []taskecho.Execution{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, wrap("decode executions", err)
	}
	return out, nil
}

// Summary is TaskEcho's statistics summary.
type Summary struct {
	TotalExecution int     `json:"total_execution"`
	TotalSuccess   int     `json:"total_success"`
	TotalFailure   int     `json:"total_failure"`
	SuccessRate    float64 `json:"success_rate"`
}

// Counts is one bucket's {total, success, failure}.
type Counts struct {
	Total   int `json:"total"`
	Success int `json:"success"`
	Failure int `json:"failure"`
}

func (c *Counts) add(e taskecho.Execution) {
	c.Total++
	if e.Result == "success" {
		c.Success++
	} else {
		c.Failure++
	}
}

// Summarize folds executions into a summary (success_rate 0–1, two decimals).
func Summarize(rows []taskecho.Execution) Summary {
	var c Counts
	for _, e := range rows {
		c.add(e)
	}
	s := Summary{TotalExecution: c.Total, TotalSuccess: c.Success, TotalFailure: c.Failure}
	if c.Total > 0 {
		s.SuccessRate = math.Round(float64(c.Success)/float64(c.Total)*100) / 100
	}
	return s
}

// Daily buckets executions by date for every day of r (empty days included).
func Daily(rows []taskecho.Execution, r Range) []map[string]any {
	by := map[string]*Counts{}
	for _, e := range rows {
		if by[e.Date] == nil {
			by[e.Date] = &Counts{}
		}
		by[e.Date].add(e)
	}
	start, _ := time.Parse("2006-01-02", r.Start)
	end, _ := time.Parse("2006-01-02", r.End)
	out := []map[string]any{}
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		key := d.Format("2006-01-02")
		c := Counts{}
		if by[key] != nil {
			c = *by[key]
		}
		out = append(out, map[string]any{"date": key, "execution": c, "task_status": listing.TaskStats{}})
	}
	return out
}

// GroupBy summarizes executions per key, largest total first.
func GroupBy(rows []taskecho.Execution, key func(taskecho.Execution) string) []Keyed {
	groups := map[string][]taskecho.Execution{}
	for _, e := range rows {
		groups[key(e)] = append(groups[key(e)], e)
	}
	out := make([]Keyed, 0, len(groups))
	for k, g := range groups {
		out = append(out, Keyed{Key: k, Name: g[len(g)-1].ProjectName, Summary: Summarize(g)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Summary.TotalExecution != out[j].Summary.TotalExecution {
			return out[i].Summary.TotalExecution > out[j].Summary.TotalExecution
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// Keyed is one group of GroupBy (Name is the latest project name seen, for by-project).
type Keyed struct {
	Key     string
	Name    string
	Summary Summary
}
