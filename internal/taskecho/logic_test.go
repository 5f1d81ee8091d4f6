package taskecho

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv"
)

func TestParseSubmitTaskEchoRules(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata/taskecho/submit_cursor_flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseSubmit(b, time.Unix(0, 0).UTC())
	if err != nil {
		t.Fatal(err)
	}
	t2 := in.Tasks[1]
	if t2.Status != "done" || len(t2.SpecFile) != 1 || t2.SpecFile[0] != "docs/test.md" || t2.Messages[1].Role != "ASSISTANT" ||
		*t2.Messages[1].SessionID != "s1" || t2.Messages[0].CreatedAt != time.Unix(0, 0).UTC() || *in.ClientInfo.ProjectPath != "~/src/my-app" {
		t.Fatalf("parsed %+v", t2)
	}
	b, _ = os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata/taskecho/submit_invalid.json"))
	_, err = ParseSubmit(b, time.Now())
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("error %v, want validation", err)
	}
	fields := map[string]bool{}
	for _, e := range ve.Errors {
		fields[e.Field] = true
	}
	for _, want := range []string{"project_id", "project_name", "queue_id", "clientInfo.username", "tasks[0].prompt",
		"tasks[0].status", "tasks[1].spec_file[1]", "tasks[1].spec_file[2]", "tasks[1].id"} {
		if !fields[want] {
			t.Errorf("no error for %s (got %v)", want, ve.Errors)
		}
	}
	g, _ := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata/taskecho/submit_git_tags_priority.json"))
	gi, err := ParseSubmit(g, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if *gi.GitInfo.Repository != "https://example.com/r.git" || gi.GitInfo.Branch != nil || gi.Tasks[0].Priority != "high" || gi.Tasks[0].PriorityRank != 8 {
		t.Fatalf("git/priority %+v %+v", gi.GitInfo, gi.Tasks[0])
	}
}

func TestServerEditedSincePull(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	cases := []struct {
		name string
		task Task
		want bool
	}{
		{"client task", Task{Source: SourceClient, ServerModifiedAt: at(0)}, false},
		{"never pulled", Task{Source: SourceServer, ServerModifiedAt: at(0)}, true},
		{"pulled after the edit", Task{Source: SourceServer, ServerModifiedAt: at(0), PullHistory: []PullEntry{{PulledAt: t0.Add(time.Second)}}}, false},
		{"edited after the pull", Task{Source: SourceServer, ServerModifiedAt: at(2 * time.Second), PullHistory: []PullEntry{{PulledAt: t0.Add(time.Second)}}}, true},
	}
	for _, c := range cases {
		if got := ServerEditedSincePull(&c.task); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestClosedHistoryClosesOnlyTheCurrentLease(t *testing.T) {
	now := time.Unix(50, 0)
	old, cur := "old", "cur"
	task := &Task{LeaseID: &cur, PullHistory: []PullEntry{{LeaseID: old, ReleasedAt: &now}, {LeaseID: cur}}}
	h := closedHistory(task, now, "k", ReleaseServer, false)
	if h[1].ReleasedAt == nil || *h[1].Reason != ReleaseServer || *h[1].ReleasedBy != "k" || h[1].PushedAt != nil {
		t.Fatalf("closed %+v", h[1])
	}
	if task.PullHistory[1].ReleasedAt != nil {
		t.Fatal("closedHistory must not modify the task it reads")
	}
	stale := &Task{LeaseID: &old, PullHistory: []PullEntry{{LeaseID: cur}}}
	if h := closedHistory(stale, now, "k", ReleaseServer, false); h[0].ReleasedAt != nil {
		t.Fatal("an entry of another lease must not be closed")
	}
}

func TestNextBatchSpreadsOnlyUnderContention(t *testing.T) {
	window := make([]*Task, 10)
	for i := range window {
		window[i] = &Task{TaskID: string(rune('a' + i))}
	}
	b, rest := nextBatch(window, 3, false)
	if ids(b)[0] != "a" || len(b) != 3 || len(rest) != 7 {
		t.Fatalf("uncontended batch %v", ids(b))
	}
	for range 20 {
		b, rest := nextBatch(window, 3, true)
		seen := map[string]bool{}
		for _, x := range append(b, rest...) {
			seen[x.TaskID] = true
		}
		if len(b) != 3 || len(seen) != 10 {
			t.Fatalf("contended batch %v rest %v must partition the window", ids(b), ids(rest))
		}
	}
}
