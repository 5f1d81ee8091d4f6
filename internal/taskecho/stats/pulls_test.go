package stats

import (
	"context"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestComputePulls(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	str := func(s string) *string { return &s }
	lease := "l"
	tasks := []*taskecho.Task{
		{Source: taskecho.SourceClient, PulledAt: at(0), PullHistory: []taskecho.PullEntry{{PulledAt: t0, ReleasedAt: at(30), PushedAt: at(30), Reason: str(taskecho.ReleaseClient)}}},
		{Source: taskecho.SourceServer, PullHistory: []taskecho.PullEntry{{PulledAt: t0, ReleasedAt: at(3600), Reason: str(taskecho.ReleaseTimeout)}}},
		{Source: taskecho.SourceServer, PulledAt: at(0), LeaseID: &lease, PullHistory: []taskecho.PullEntry{{PulledAt: t0, ReleasedAt: at(5), Reason: str(taskecho.ReleaseClient)}, {PulledAt: t0, LeaseID: "l"}}},
		{Source: taskecho.SourceServer, PulledAt: at(0), PullHistory: []taskecho.PullEntry{{PulledAt: t0, ReleasedAt: at(90), PushedAt: at(90), Reason: str(taskecho.ReleaseClient)}}},
	}
	st := ComputePulls(tasks)
	if st.TotalServerTasks != 3 || st.NotPulled != 1 || st.Pulled != 2 || st.PulledNotPushed != 1 || st.TotalPulls != 5 ||
		st.SuccessfulPulls != 2 || st.TimedOut != 1 || st.Released != 1 || st.PullSuccessRate != 67 || st.LeaseSuccessRate != 50 || *st.AveragePullDuration != 60 {
		t.Fatalf("stats %+v", st)
	}
	if empty := ComputePulls(nil); empty.AveragePullDuration != nil || empty.PullSuccessRate != 0 {
		t.Fatalf("empty stats %+v", empty)
	}
}

// After the sweeper released two expired leases, the pull statistics count them as timed out, none open, and
// every server task pullable again.
func TestPullsAfterTheSweep(t *testing.T) {
	ctx := context.Background()
	db := testenv.Mongo(t)
	svc, err := taskecho.New(taskechodb.New(db), taskecho.DefaultSettings(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	svc.SetClock(func() time.Time { return now })
	if err := svc.Store().(*taskechodb.Store).EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		f, err := taskecho.ParseTaskCreate([]byte(`{"taskId":"` + id + `","name":"n","prompt":"p"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Admin.CreateTask(ctx, taskecho.Actor{Name: "admin"}, "p", nil, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Leases.Pull(ctx, taskecho.Actor{Name: "w"}, taskecho.PullFilter{ProjectID: "p", Limit: 2}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	if n, err := svc.Leases.ReleaseExpiredLeases(ctx, 500); err != nil || n != 2 {
		t.Fatalf("released %d (%v), want 2", n, err)
	}
	st, err := New(db, svc.Now, nil).Pulls(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if st.TimedOut != 2 || st.PulledNotPushed != 0 || st.NotPulled != 3 {
		t.Fatalf("stats %+v, want 2 timed out, none open, all 3 pullable", st)
	}
}
