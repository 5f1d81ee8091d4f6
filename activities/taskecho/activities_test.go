package taskecho_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	taskechoact "github.com/taskloom/taskloom/activities/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/alert"
	"github.com/taskloom/taskloom/internal/taskecho/queueop"
	"github.com/taskloom/taskloom/internal/taskecho/stats"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fixture is the activities over a task server on a fresh database, with a clock the test moves.
type fixture struct {
	t   *testing.T
	ctx context.Context
	srv *taskecho.Server
	act *taskechoact.Activities
	env *testsuite.TestActivityEnvironment
	now time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := testenv.Mongo(t)
	f := &fixture{t: t, ctx: context.Background(), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	srv, err := taskecho.New(taskechodb.New(db), taskecho.DefaultSettings(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetClock(func() time.Time { return f.now })
	if err := taskechodb.EnsureIndexes(f.ctx, db); err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.act = &taskechoact.Activities{Leases: srv.Leases, QueueOps: srv.QueueOps, Alerter: stats.New(db, srv.Now, nil),
		Alerts: alert.Thresholds{Window: time.Hour, MaxTimeouts: 1}}
	var s testsuite.WorkflowTestSuite
	f.env = s.NewTestActivityEnvironment()
	f.env.RegisterActivity(f.act)
	return f
}

var admin = taskecho.Actor{Name: "admin"}

// serverTask creates a pullable task at the project level of p.
func (f *fixture) serverTask(p, id string, expires *time.Time) {
	f.t.Helper()
	name, prompt := id, "do "+id
	tf := &taskecho.TaskFields{TaskID: id, Name: &name, Prompt: &prompt, ExpiresAt: expires, ExpiresSet: expires != nil}
	if _, err := f.srv.Admin.CreateTask(f.ctx, admin, p, nil, tf); err != nil {
		f.t.Fatal(err)
	}
}

// submitFinishedQueue submits queue q of project p with one done and one failed task, then moves
// the clock a minute on.
func (f *fixture) submitFinishedQueue() {
	f.t.Helper()
	tasks := []map[string]any{
		{"id": "a", "name": "A", "prompt": "x", "status": "done"},
		{"id": "b", "name": "B", "prompt": "x", "status": "error"},
	}
	body, _ := json.Marshal(map[string]any{"project_id": "p", "project_name": "P", "queue_id": "q", "queue_name": "Q", "tasks": tasks})
	in, err := taskecho.ParseSubmit(body, f.now)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.srv.Intake.Submit(f.ctx, admin, in, ""); err != nil {
		f.t.Fatal(err)
	}
	f.now = f.now.Add(time.Minute)
}

func (f *fixture) task(p, id string) *taskecho.Task {
	f.t.Helper()
	t, err := f.srv.Lookup.Task(f.ctx, taskecho.TaskRef{ProjectID: p, TaskID: id}, true)
	if err != nil {
		f.t.Fatal(err)
	}
	return t
}

// A sweep releases every expired lease (and only those), with the count of overdue ones it saw;
// the released tasks are pullable again, and a second sweep finds nothing.
func TestReleaseExpiredLeasesReleasesOnlyExpiredLeases(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"a", "b", "c"} {
		f.serverTask("p", id, nil)
	}
	first, err := f.srv.Leases.Pull(f.ctx, taskecho.Actor{Name: "w1"}, taskecho.PullFilter{ProjectID: "p", Limit: 2})
	if err != nil || len(first.Tasks) != 2 {
		t.Fatalf("first pull %v (%v), want 2 tasks", first, err)
	}
	f.now = f.now.Add(f.srv.Settings().PullTimeout + time.Second)
	live, err := f.srv.Leases.Pull(f.ctx, taskecho.Actor{Name: "w2"}, taskecho.PullFilter{ProjectID: "p", TaskIDs: []string{"c"}})
	if err != nil || len(live.Tasks) != 1 {
		t.Fatalf("pull of c %v (%v)", live, err)
	}

	v, err := f.env.ExecuteActivity(f.act.TaskEchoReleaseExpiredLeases)
	if err != nil {
		t.Fatal(err)
	}
	var r taskechoact.SweepResult
	if err := v.Get(&r); err != nil {
		t.Fatal(err)
	}
	if r.Overdue != 2 || r.Released != 2 {
		t.Fatalf("sweep %+v, want 2 overdue and 2 released", r)
	}
	for _, id := range []string{"a", "b"} {
		tk := f.task("p", id)
		last := tk.PullHistory[len(tk.PullHistory)-1]
		if tk.LeaseID != nil || tk.PulledAt != nil || last.Reason == nil || *last.Reason != taskecho.ReleaseTimeout {
			t.Fatalf("task %s after the sweep: lease %v pulled %v history %+v", id, tk.LeaseID, tk.PulledAt, last)
		}
	}
	if c := f.task("p", "c"); c.LeaseID == nil || *c.LeaseID != live.LeaseID {
		t.Fatalf("the live lease of c was ended: %+v", c.LeaseID)
	}

	v, err = f.env.ExecuteActivity(f.act.TaskEchoReleaseExpiredLeases)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Get(&r); err != nil || r.Overdue != 0 || r.Released != 0 {
		t.Fatalf("second sweep %+v (%v), want nothing to do", r, err)
	}
}

// ExpireTasks archives the unpulled server tasks past expires_at, once.
func TestExpireTasksArchivesExpiredTasksOnce(t *testing.T) {
	f := newFixture(t)
	soon := f.now.Add(time.Minute)
	f.serverTask("p", "old", &soon)
	f.serverTask("p", "keep", nil)
	f.now = f.now.Add(2 * time.Minute)
	for i, want := range []int{1, 0} {
		v, err := f.env.ExecuteActivity(f.act.TaskEchoExpireTasks)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := v.Get(&n); err != nil || n != want {
			t.Fatalf("run %d expired %d (%v), want %d", i+1, n, err, want)
		}
	}
	if f.task("p", "old").ArchivedAt == nil || f.task("p", "keep").ArchivedAt != nil {
		t.Fatal("want old archived and keep untouched")
	}
}

// The alert check reads the audit log: leases released by timeout beyond the threshold are a
// breach in the sweep's result.
func TestCheckAlertsReportsTimeoutsBeyondTheThreshold(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"a", "b"} {
		f.serverTask("p", id, nil)
	}
	if _, err := f.srv.Leases.Pull(f.ctx, taskecho.Actor{Name: "w"}, taskecho.PullFilter{ProjectID: "p"}); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(f.srv.Settings().PullTimeout + time.Second)
	if n, err := f.srv.Leases.ReleaseExpiredLeases(f.ctx, 10); err != nil || n != 2 {
		t.Fatalf("released %d (%v)", n, err)
	}
	v, err := f.env.ExecuteActivity(f.act.TaskEchoCheckAlerts)
	if err != nil {
		t.Fatal(err)
	}
	var r taskechoact.SweepResult
	if err := v.Get(&r); err != nil {
		t.Fatal(err)
	}
	if r.Alerts == nil || len(r.AlertBreaches) == 0 {
		t.Fatalf("alerts %+v breaches %v, want a timeout breach (2 > 1)", r.Alerts, r.AlertBreaches)
	}
}

// crashingQueueOps fails the calls a test names once each, after the real store did nothing for
// them, as a worker dying between two writes would: failApply fails the batch call of that
// number (1-based), failFinish the first finish.
type crashingQueueOps struct {
	taskechoact.QueueOps
	calls, failApply int
	failFinish       bool
}

func (c *crashingQueueOps) ApplyQueueOpBatch(ctx context.Context, op queueop.Op, after string, batch int) (int, string, error) {
	c.calls++
	if c.calls == c.failApply {
		return 0, "", errors.New("worker crashed")
	}
	return c.QueueOps.ApplyQueueOpBatch(ctx, op, after, batch)
}

func (c *crashingQueueOps) FinishQueueOp(ctx context.Context, op queueop.Op, count int) error {
	if c.failFinish {
		c.failFinish = false
		return errors.New("worker crashed")
	}
	return c.QueueOps.FinishQueueOp(ctx, op, count)
}

// TaskEchoRunQueueOp does a whole operation of one batch in one call: the batch, the empty read
// that ends the queue and the finish. A crash between any two of its writes (after the batch's
// writes, before the finish) leaves the reset tasks reset and the queue unstamped; the retry,
// from the start as Temporal runs it without heartbeat details, counts every task once and
// stamps the queue with that count.
func TestRunQueueOpIsOneCallAndSurvivesACrashBetweenWrites(t *testing.T) {
	for _, crash := range []struct {
		name       string
		failApply  int
		failFinish bool
	}{{"after the batch's writes", 2, false}, {"before the finish", 0, true}} {
		t.Run(crash.name, func(t *testing.T) {
			f := newFixture(t)
			f.submitFinishedQueue()
			ops := &crashingQueueOps{QueueOps: f.srv.QueueOps, failApply: crash.failApply, failFinish: crash.failFinish}
			f.act.QueueOps = ops
			op := queueop.Op{OpID: "op1", ProjectID: "p", QueueID: "q", Operation: queueop.Reset, Actor: "admin", At: f.now}
			if _, err := f.env.ExecuteActivity(f.act.TaskEchoRunQueueOp, taskechoact.QueueOpRun{Op: op}); err == nil {
				t.Fatal("the crashed call succeeded")
			}
			q := "q"
			for _, id := range []string{"a", "b"} {
				tk, err := f.srv.Lookup.Task(f.ctx, taskecho.TaskRef{ProjectID: "p", QueueID: &q, TaskID: id}, false)
				if err != nil || tk.Status != taskecho.StatusPending {
					t.Fatalf("task %s after the crash: %+v (%v), want reset", id, tk, err)
				}
			}
			if qu, _ := f.srv.Lookup.Queue(f.ctx, "p", "q", nil); qu.LastOperation != nil {
				t.Fatalf("queue stamped %v before the finish ran", *qu.LastOperation)
			}
			v, err := f.env.ExecuteActivity(f.act.TaskEchoRunQueueOp, taskechoact.QueueOpRun{Op: op})
			if err != nil {
				t.Fatal(err)
			}
			var r taskechoact.QueueOpRunResult
			if err := v.Get(&r); err != nil || !r.Finished || r.Changed != 2 {
				t.Fatalf("retry: %+v (%v), want finished with 2 changed", r, err)
			}
			qu, err := f.srv.Lookup.Queue(f.ctx, "p", "q", nil)
			if err != nil || qu.LastOperation == nil || *qu.LastOperation != queueop.Reset || !qu.LastResetAt.Equal(op.At) {
				t.Fatalf("queue after the retry: %+v (%v)", qu, err)
			}
		})
	}
}
