package demo

import (
	"context"
	"slices"
	"testing"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestSeedIsPullableAndRepeatable(t *testing.T) {
	ctx := context.Background()
	svc, err := taskecho.New(taskechodb.New(testenv.Mongo(t)), taskecho.DefaultSettings(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Store().(*taskechodb.Store).EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		pid, err := Seed(ctx, svc)
		if err != nil || pid != ProjectID {
			t.Fatalf("seed: %q %v", pid, err)
		}
	}
	queue := "demo.json"
	for _, c := range []struct {
		queue *string
		want  []string
	}{
		{nil, []string{"server-high", "server-medium", "server-low"}},
		{&queue, []string{"server-q1", "server-q2"}},
	} {
		r, err := svc.Leases.Pull(ctx, taskecho.Actor{Name: "demo-client"}, taskecho.PullFilter{ProjectID: ProjectID, QueueID: c.queue})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, task := range r.Tasks {
			got = append(got, task.TaskID)
		}
		if !slices.Equal(got, c.want) {
			t.Fatalf("demo pull of queue %v: %v, want %v (highest priority first)", c.queue, got, c.want)
		}
	}
}
