package demo

import (
	"context"
	"testing"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestSeedIsPullableAndRepeatable(t *testing.T) {
	ctx := context.Background()
	svc, err := taskecho.NewService(testenv.Mongo(t), taskecho.DefaultSettings(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		pid, err := Seed(ctx, svc)
		if err != nil || pid != ProjectID {
			t.Fatalf("seed: %q %v", pid, err)
		}
	}
	r, err := svc.Pull(ctx, taskecho.Actor{Name: "demo-client"}, taskecho.PullFilter{ProjectID: ProjectID})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range r.Tasks {
		got = append(got, task.TaskID)
	}
	if len(got) != 5 || got[0] != "server-q1" || got[1] != "server-high" {
		t.Fatalf("demo pull %v, want the five server tasks, highest priority first", got)
	}
}
