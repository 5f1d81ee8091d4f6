package taskecho

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newTestStore builds the store the fixtures run on; store_link_test.go (package taskecho_test,
// which may import taskechodb) sets it, with ensureTestIndexes, before the tests run.
var (
	newTestStore      func(*mongo.Database) Store
	ensureTestIndexes func(context.Context, *mongo.Database) error
)

// testServer is a server whose parts' methods are all reachable from one value, with its
// database at hand for checks that read the documents directly.
type testServer struct {
	*Server
	*Intake
	*Leases
	*QueueOps
	*Admin
	*Lookup
	db    *mongo.Database
	tasks *mongo.Collection
}

// EnsureIndexes creates the store's indexes.
func (s *testServer) EnsureIndexes(ctx context.Context) error { return ensureTestIndexes(ctx, s.db) }

// findTasks reads the tasks matching filter directly.
func (s *testServer) findTasks(ctx context.Context, what string, filter any) ([]*Task, error) {
	cur, err := s.tasks.Find(ctx, filter)
	if err != nil {
		return nil, wrap("find "+what, err)
	}
	var out []*Task
	return out, wrap("read "+what, cur.All(ctx, &out))
}

// faultStore lets a test replace the push's bulk write (push, when set, runs instead of the
// store's WritePush; next is the real store).
type faultStore struct {
	Store
	push func(ctx context.Context, next Store, ws []PushWrite) (bool, error)
	// down, when set, is asked before each store method it names (by their method name): an
	// error answers instead of the store, as a database that stopped answering would; nil lets
	// the call through (after whatever delay down took, as a slow database would).
	down func(method string) error
	// statements and won count the guarded statements WriteTasks sent and those that applied.
	statements, won atomic.Int64
}

func (s *faultStore) fail(method string) error {
	if s.down == nil {
		return nil
	}
	return s.down(method)
}

func (s *faultStore) UpdateProject(ctx context.Context, projectID string, set Fields) (bool, error) {
	if err := s.fail("UpdateProject"); err != nil {
		return false, err
	}
	return s.Store.UpdateProject(ctx, projectID, set)
}

func (s *faultStore) UpdateQueue(ctx context.Context, projectID, queueID string, set Fields) error {
	if err := s.fail("UpdateQueue"); err != nil {
		return err
	}
	return s.Store.UpdateQueue(ctx, projectID, queueID, set)
}

func (s *faultStore) PullCandidates(ctx context.Context, f PullFilter, now time.Time, window int) ([]*Task, error) {
	if err := s.fail("PullCandidates"); err != nil {
		return nil, err
	}
	return s.Store.PullCandidates(ctx, f, now, window)
}

func (s *faultStore) WriteTasks(ctx context.Context, op string, ws []TaskWrite) ([]*Task, error) {
	if err := s.fail("WriteTasks"); err != nil {
		return nil, err
	}
	won, err := s.Store.WriteTasks(ctx, op, ws)
	s.statements.Add(int64(len(ws)))
	s.won.Add(int64(len(won)))
	return won, err
}

func (s *faultStore) InsertAudit(ctx context.Context, e AuditEntry) error {
	if err := s.fail("InsertAudit"); err != nil {
		return err
	}
	return s.Store.InsertAudit(ctx, e)
}

func (s *faultStore) WritePush(ctx context.Context, ws []PushWrite) (bool, error) {
	if s.push != nil {
		return s.push(ctx, s.Store, ws)
	}
	return s.Store.WritePush(ctx, ws)
}

// fixture is a server over a fresh database with a controllable clock.
type fixture struct {
	t     *testing.T
	svc   *testServer
	fault *faultStore
	ctx   context.Context
	now   time.Time
}

func newFixture(t *testing.T, mut ...func(*Settings)) *fixture {
	t.Helper()
	return newFixtureOn(t, testenv.Mongo(t), mut...)
}

// patientMongo is a fresh database on a client that waits minutes rather than 30 s for an
// answer: 32 concurrent pullers queue up behind the embedded database's serialised writes, and on
// a shared 2-core machine a write can wait longer than testenv's default timeout.
func patientMongo(t *testing.T) *mongo.Database {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(testenv.MongoURI(t)).SetTimeout(5 * time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	db := c.Database(testenv.Unique("t_"))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = db.Drop(ctx)
		_ = c.Disconnect(ctx)
	})
	return db
}

func newFixtureOn(t *testing.T, db *mongo.Database, mut ...func(*Settings)) *fixture {
	t.Helper()
	set := DefaultSettings()
	for _, m := range mut {
		m(&set)
	}
	fault := &faultStore{Store: newTestStore(db)}
	srv, err := New(fault, set, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := &testServer{Server: srv, Intake: srv.Intake, Leases: srv.Leases, QueueOps: srv.QueueOps, Admin: srv.Admin,
		Lookup: srv.Lookup, db: db, tasks: db.Collection("tasks")}
	f := &fixture{t: t, svc: svc, fault: fault, ctx: context.Background(), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	svc.SetClock(func() time.Time { return f.now })
	if err := svc.EnsureIndexes(f.ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) advance(d time.Duration) { f.now = f.now.Add(d) }

var admin = Actor{Name: "admin-key", KeyID: "k-admin"}

// submit pushes a queue of client tasks.
func (f *fixture) submit(project, queue string, tasks ...map[string]any) (*SubmitResult, error) {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"project_id": project, "project_name": project + " name", "queue_id": queue, "queue_name": queue, "tasks": tasks,
	})
	in, err := ParseSubmit(body, f.now)
	if err != nil {
		f.t.Fatalf("parse submit: %v", err)
	}
	return f.svc.Submit(f.ctx, Actor{Name: "client"}, in, "")
}

func clientTask(id, status string) map[string]any {
	return map[string]any{"id": id, "name": "task " + id, "prompt": "do " + id, "status": status}
}

// serverTask creates a server task (queue "" = project level).
func (f *fixture) serverTask(project, queue, id string, extra map[string]any) *Task {
	f.t.Helper()
	body := map[string]any{"taskId": id, "name": "server " + id, "prompt": "p " + id}
	for k, v := range extra {
		body[k] = v
	}
	raw, _ := json.Marshal(body)
	tf, err := ParseTaskCreate(raw)
	if err != nil {
		f.t.Fatalf("parse create: %v", err)
	}
	var q *string
	if queue != "" {
		q = &queue
	}
	t, err := f.svc.CreateTask(f.ctx, admin, project, q, tf)
	if err != nil {
		f.t.Fatalf("create %s: %v", id, err)
	}
	return t
}

func (f *fixture) pull(actor string, flt PullFilter) *PullResult {
	f.t.Helper()
	r, err := f.svc.Pull(f.ctx, Actor{Name: actor}, flt)
	if err != nil {
		f.t.Fatalf("pull: %v", err)
	}
	return r
}

func ids(ts []*Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.TaskID
	}
	return out
}
