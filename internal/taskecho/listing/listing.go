// Package listing is the browsing side of the echo task server: pages of projects, queues and
// tasks with their status counts, the polling versions of the */check endpoints, and the
// whole-server totals (GET /api/v1/stats). It only reads; the task server writes what it lists, and answers
// "project (or queue) not found" for it.
package listing

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
)

// Reader lists the echo collections of one database.
type Reader struct {
	svc      *taskecho.Server
	db       *mongo.Database
	projects *mongo.Collection
	queues   *mongo.Collection
	tasks    *mongo.Collection
}

// New builds a reader over db; svc (the service over the same database) looks projects and
// queues up, so that a missing one is the service's not-found error, and is the clock of the
// polling versions.
func New(db *mongo.Database, svc *taskecho.Server) *Reader {
	return &Reader{svc: svc, db: db, projects: db.Collection(taskechodb.CollProjects), queues: db.Collection(taskechodb.CollQueues),
		tasks: db.Collection(taskechodb.CollTasks)}
}

func wrap(op string, err error) error { return fmt.Errorf("%s: %w", op, err) }

// TaskStats counts tasks by status; running and cancelled count only toward Total (TaskEcho).
type TaskStats struct {
	Total   int `json:"total"`
	Pending int `json:"pending"`
	Done    int `json:"done"`
	Error   int `json:"error"`
}

func (t *TaskStats) add(status string, n int) {
	t.Total += n
	switch status {
	case taskecho.StatusPending:
		t.Pending += n
	case taskecho.StatusDone:
		t.Done += n
	case taskecho.StatusError:
		t.Error += n
	}
}

// MaxPage is the highest page number a listing serves. A deeper page would ask the database to
// skip millions of documents (and, unbounded, (page-1)*size overflows); nobody browses that far,
// a search or filter finds it.
const MaxPage = 100_000

// Page is a 1-based page request.
type Page struct{ Page, Size int }

// Skip is how many items come before the page.
func (p Page) Skip() int64 { return int64(p.Page-1) * int64(p.Size) }

func (p Page) opts() *options.FindOptionsBuilder {
	return options.Find().SetSkip(p.Skip()).SetLimit(int64(p.Size))
}

// Project is a project with its queue and task counts (queue tasks, soft-deleted
// included, as TaskEcho counted them).
type Project struct {
	Project    *taskecho.Project
	QueueCount int
	Stats      TaskStats
}

// Projects lists projects, most recently active first. search is a case-insensitive
// substring of the name or custom title; tags must all be present (AND).
func (s *Reader) Projects(ctx context.Context, pg Page, search string, tags []string) ([]Project, int64, error) {
	f := bson.M{}
	if search != "" {
		rx := bson.Regex{Pattern: regexp.QuoteMeta(search), Options: "i"}
		f["$or"] = bson.A{bson.M{"name": rx}, bson.M{"metadata.custom_title": rx}}
	}
	if len(tags) > 0 {
		f["metadata.tags"] = bson.M{"$all": tags}
	}
	if search != "" {
		// A case-insensitive substring match is no index's prefix: the search reads the whole
		// project registry, which is small and admin-made.
		ctx = mongox.DeliberateScan(ctx)
	}
	total, err := s.projects.CountDocuments(ctx, f)
	if err != nil {
		return nil, 0, wrap("count projects", err)
	}
	cur, err := s.projects.Find(ctx, f, pg.opts().SetSort(bson.D{{Key: "last_task_at", Value: -1}, {Key: "created_at", Value: -1}}))
	if err != nil {
		return nil, 0, wrap("list projects", err)
	}
	var ps []*taskecho.Project
	if err := cur.All(ctx, &ps); err != nil {
		return nil, 0, wrap("decode projects", err)
	}
	out := make([]Project, 0, len(ps))
	for _, p := range ps {
		sum, err := s.summarize(ctx, p)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, *sum)
	}
	return out, total, nil
}

func (s *Reader) summarize(ctx context.Context, p *taskecho.Project) (*Project, error) {
	qn, err := s.queues.CountDocuments(ctx, bson.M{"project_id": p.ProjectID})
	if err != nil {
		return nil, wrap("count queues", err)
	}
	st, err := s.statusCounts(ctx, bson.M{"project_id": p.ProjectID, "queue_id": bson.M{"$ne": nil}})
	if err != nil {
		return nil, err
	}
	return &Project{Project: p, QueueCount: int(qn), Stats: st[""]}, nil
}

// Project returns one project with its counts.
func (s *Reader) Project(ctx context.Context, projectID string) (*Project, error) {
	p, err := s.svc.Lookup.Project(ctx, projectID)
	if err != nil {
		return nil, err
	}
	return s.summarize(ctx, p)
}

// statusCounts groups the tasks matching f by queue and status; key "" holds the sum.
func (s *Reader) statusCounts(ctx context.Context, f bson.M) (map[string]TaskStats, error) {
	match := bson.M{"deleted_at": nil} // removed tasks are not counted, as in TaskEcho
	for k, v := range f {
		match[k] = v
	}
	pipe := bson.A{
		bson.M{"$match": match},
		bson.M{"$group": bson.M{"_id": bson.M{"q": "$queue_id", "s": "$status"}, "n": bson.M{"$sum": 1}}},
	}
	cur, err := s.tasks.Aggregate(ctx, pipe)
	if err != nil {
		return nil, wrap("count tasks by status", err)
	}
	var rows []struct {
		ID struct {
			Q *string `bson:"q"`
			S string  `bson:"s"`
		} `bson:"_id"`
		N int `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, wrap("decode task counts", err)
	}
	out := map[string]TaskStats{"": {}}
	for _, r := range rows {
		sum := out[""]
		sum.add(r.ID.S, r.N)
		out[""] = sum
		if r.ID.Q != nil {
			q := out[*r.ID.Q]
			q.add(r.ID.S, r.N)
			out[*r.ID.Q] = q
		}
	}
	return out, nil
}

// Queue is a queue with its task counts.
type Queue struct {
	Queue *taskecho.Queue
	Stats TaskStats
}

// Queues lists a project's queues, most recently active first.
func (s *Reader) Queues(ctx context.Context, projectID string, pg Page, search string) ([]Queue, int64, error) {
	if _, err := s.svc.Lookup.Project(ctx, projectID); err != nil {
		return nil, 0, err
	}
	f := bson.M{"project_id": projectID}
	if search != "" {
		f["name"] = bson.Regex{Pattern: regexp.QuoteMeta(search), Options: "i"}
	}
	total, err := s.queues.CountDocuments(ctx, f)
	if err != nil {
		return nil, 0, wrap("count queues", err)
	}
	cur, err := s.queues.Find(ctx, f, pg.opts().SetSort(bson.D{{Key: "last_task_at", Value: -1}, {Key: "created_at", Value: -1}}))
	if err != nil {
		return nil, 0, wrap("list queues", err)
	}
	var qs []*taskecho.Queue
	if err := cur.All(ctx, &qs); err != nil {
		return nil, 0, wrap("decode queues", err)
	}
	counts, err := s.statusCounts(ctx, bson.M{"project_id": projectID, "queue_id": bson.M{"$ne": nil}})
	if err != nil {
		return nil, 0, err
	}
	out := make([]Queue, 0, len(qs))
	for _, q := range qs {
		out = append(out, Queue{Queue: q, Stats: counts[q.QueueID]})
	}
	return out, total, nil
}

// Queue returns one queue with its counts.
func (s *Reader) Queue(ctx context.Context, projectID, queueID string) (*Queue, error) {
	_, q, err := s.svc.Lookup.ProjectQueue(ctx, projectID, queueID, map[string]any{"project_id": projectID, "queue_id": queueID})
	if err != nil {
		return nil, err
	}
	counts, err := s.statusCounts(ctx, bson.M{"project_id": projectID, "queue_id": queueID})
	if err != nil {
		return nil, err
	}
	return &Queue{Queue: q, Stats: counts[queueID]}, nil
}

// TaskQuery filters a task listing.
type TaskQuery struct {
	Page
	Status string
	// Tags match any (OR), case-insensitively (queue lists).
	Tags []string
	// PulledStatus is "pulled", "not_pulled" or "" (project lists).
	PulledStatus string
}

// Tasks lists the tasks of a queue (queueID set; oldest first) or the project-level tasks
// (queueID nil; newest first).
func (s *Reader) Tasks(ctx context.Context, projectID string, queueID *string, q TaskQuery) ([]*taskecho.Task, int64, error) {
	f := bson.M{"project_id": projectID, "queue_id": queueID}
	sort := bson.D{{Key: "created_at", Value: -1}, {Key: "_id", Value: -1}}
	if queueID != nil {
		f["queue_id"] = *queueID
		sort = bson.D{{Key: "created_at", Value: 1}, {Key: "_id", Value: 1}}
	}
	f["deleted_at"] = nil // a removed task is gone for clients, as in TaskEcho
	if q.Status != "" {
		f["status"] = q.Status
	}
	if len(q.Tags) > 0 {
		or := bson.A{}
		for _, t := range q.Tags {
			or = append(or, bson.Regex{Pattern: "^" + regexp.QuoteMeta(strings.TrimSpace(t)) + "$", Options: "i"})
		}
		f["tags"] = bson.M{"$in": or}
	}
	switch q.PulledStatus {
	case "pulled":
		f["pulled_at"] = bson.M{"$ne": nil}
	case "not_pulled":
		f["pulled_at"] = nil
	}
	total, err := s.tasks.CountDocuments(ctx, f)
	if err != nil {
		return nil, 0, wrap("count tasks", err)
	}
	cur, err := s.tasks.Find(ctx, f, q.opts().SetSort(sort))
	if err != nil {
		return nil, 0, wrap("list tasks", err)
	}
	out := []*taskecho.Task{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, 0, wrap("decode tasks", err)
	}
	return out, total, nil
}

// Version is the light "did anything change" answer of the */check endpoints.
type Version struct {
	Version       int64     `json:"version"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
	Count         int64     `json:"count"`
}

// ProjectsVersion is the polling version of the project list: of every project, or of the one a
// project-bound key sees (projectID not empty).
func (s *Reader) ProjectsVersion(ctx context.Context, projectID string) (*Version, error) {
	f := bson.M{}
	if projectID != "" {
		f["project_id"] = projectID
	}
	return s.version(ctx, taskechodb.CollProjects, f)
}

// QueuesVersion is the polling version of a project's queue list.
func (s *Reader) QueuesVersion(ctx context.Context, projectID string) (*Version, error) {
	return s.version(ctx, taskechodb.CollQueues, bson.M{"project_id": projectID})
}

// TasksVersion is the polling version of a queue's task list.
func (s *Reader) TasksVersion(ctx context.Context, projectID, queueID string) (*Version, error) {
	return s.version(ctx, taskechodb.CollTasks, bson.M{"project_id": projectID, "queue_id": queueID})
}

// version computes the newest updated_at (as ms) and the count of the documents matching f in
// coll.
func (s *Reader) version(ctx context.Context, coll string, f bson.M) (*Version, error) {
	c := s.db.Collection(coll)
	n, err := c.CountDocuments(ctx, f)
	if err != nil {
		return nil, wrap("count "+coll, err)
	}
	v := &Version{Count: n, LastUpdatedAt: s.svc.Now()}
	var doc struct {
		UpdatedAt time.Time `bson:"updated_at"`
	}
	err = c.FindOne(ctx, f, options.FindOne().SetSort(bson.D{{Key: "updated_at", Value: -1}})).Decode(&doc)
	if err == nil {
		v.Version, v.LastUpdatedAt = doc.UpdatedAt.UnixMilli(), doc.UpdatedAt
	}
	return v, nil
}

// Totals are live counts over every project, or over one (queue tasks only, as TaskEcho).
type Totals struct {
	ProjectCount int64     `json:"project_count"`
	QueueCount   int64     `json:"queue_count"`
	TaskCount    int       `json:"task_count"`
	TaskStats    TaskStats `json:"task_stats"`
}

// Totals counts the live projects, queues and tasks: of every project, or of projectID alone
// when it is not empty (what a project-bound key may see).
func (s *Reader) Totals(ctx context.Context, projectID string) (*Totals, error) {
	scope := bson.M{}
	if projectID != "" {
		scope["project_id"] = projectID
	}
	pn, err := s.projects.CountDocuments(ctx, scope)
	if err != nil {
		return nil, wrap("count projects", err)
	}
	qn, err := s.queues.CountDocuments(ctx, scope)
	if err != nil {
		return nil, wrap("count queues", err)
	}
	tasks := bson.M{"queue_id": bson.M{"$ne": nil}}
	if projectID != "" {
		tasks["project_id"] = projectID
	}
	st, err := s.statusCounts(ctx, tasks)
	if err != nil {
		return nil, err
	}
	return &Totals{ProjectCount: pn, QueueCount: qn, TaskCount: st[""].Total, TaskStats: st[""]}, nil
}
