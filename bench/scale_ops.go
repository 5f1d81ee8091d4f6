package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

// scaleOpNames are the series' operations, in the order each sample runs them.
var scaleOpNames = []string{"taskecho pull (limit 50)", "taskecho confirm/batch (50)", "taskecho append",
	"taskecho task list page", "taskecho project stats", "pipeline task GET", "pipeline user's task page",
	"console pipeline tasks page"}

// scaleFigures is what one operation cost at one size over its samples.
type scaleFigures struct {
	op string
	// commands is each sample's MongoDB commands by "command collection"; a sample whose count
	// differs from the first's makes the operation's cost depend on something other than the size.
	commands []map[string]int
	lat      latencies
}

// varies says whether the samples sent different commands.
func (f *scaleFigures) varies() bool {
	for _, c := range f.commands[1:] {
		if !maps.Equal(c, f.commands[0]) {
			return true
		}
	}
	return false
}

// byCommand is the first sample's commands as the Result's per-unit split.
func (f *scaleFigures) byCommand() map[string]float64 {
	out := map[string]float64{}
	for k, v := range f.commands[0] {
		out[k] = float64(v)
	}
	return out
}

// measureScale runs samples rounds of every operation on a loaded project through svc and the
// console's reader over db, counting each call's MongoDB commands with a tally (db's client must
// carry mongox.Monitor) and timing it. A round pulls 50 tasks, confirms them as one batch,
// appends a message to one finished task and reads the list page and the stats; p must hold at
// least samples×50 pending tasks and samples finished ones.
func measureScale(ctx context.Context, db *mongo.Database, svc *taskecho.Server, p scaleProject, samples int) ([]*scaleFigures, error) {
	pipes := pipelinedb.New(db)
	figs := make(map[string]*scaleFigures, len(scaleOpNames))
	for _, name := range scaleOpNames {
		figs[name] = &scaleFigures{op: name}
	}
	reader := listing.New(db, svc)
	actor := taskecho.Actor{Name: "bench-scale"}
	record := func(name string, op func(ctx context.Context) error) error {
		tctx, tally := mongox.WithTally(ctx)
		t0 := time.Now()
		if err := op(tctx); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		f := figs[name]
		f.lat = append(f.lat, time.Since(t0))
		counts := map[string]int{}
		for _, c := range tally.Commands() {
			counts[strings.TrimSpace(c.Name+" "+c.Collection)]++ // getMore names no collection
		}
		f.commands = append(f.commands, counts)
		return nil
	}
	for i := range samples {
		var pulled *taskecho.PullResult
		err := record(scaleOpNames[0], func(ctx context.Context) (err error) {
			pulled, err = svc.Leases.Pull(ctx, actor, taskecho.PullFilter{ProjectID: p.id, Limit: pullLimit})
			if err == nil && len(pulled.Tasks) != pullLimit {
				err = fmt.Errorf("handed out %d tasks, want %d", len(pulled.Tasks), pullLimit)
			}
			return err
		})
		if err == nil {
			err = record(scaleOpNames[1], func(ctx context.Context) error { return confirmAll(ctx, svc, actor, p.id, pulled) })
		}
		if err == nil {
			err = record(scaleOpNames[2], func(ctx context.Context) error {
				_, err := svc.Intake.AppendMessage(ctx, &taskecho.IncrementalInput{ProjectID: p.id,
					TaskID: fmt.Sprintf("t-%07d", p.pending+i), Role: "ASSISTANT", Content: "follow-up"})
				return err
			})
		}
		if err == nil {
			err = record(scaleOpNames[3], func(ctx context.Context) error {
				page, total, err := reader.Tasks(ctx, p.id, nil, listing.TaskQuery{Page: listing.Page{Page: 1, Size: 50}})
				if err == nil && (len(page) != 50 || total != int64(p.size)) {
					err = fmt.Errorf("page of %d tasks of %d, want 50 of %d", len(page), total, p.size)
				}
				return err
			})
		}
		if err == nil {
			err = record(scaleOpNames[4], func(ctx context.Context) error {
				_, err := reader.Project(ctx, p.id)
				return err
			})
		}
		if err == nil {
			err = record(scaleOpNames[5], func(ctx context.Context) error { return getPipelineTask(ctx, pipes, p, i) })
		}
		if err == nil {
			err = record(scaleOpNames[6], func(ctx context.Context) error {
				return pipelinePage(ctx, pipes, pipelinedb.TaskFilter{UserID: p.pipelineUser()}, p.size)
			})
		}
		if err == nil {
			err = record(scaleOpNames[7], func(ctx context.Context) error { return pipelinePage(ctx, pipes, pipelinedb.TaskFilter{}, p.size) })
		}
		if err != nil {
			return nil, fmt.Errorf("size %d, sample %d: %w", p.size, i, err)
		}
	}
	out := make([]*scaleFigures, 0, len(figs))
	for _, name := range scaleOpNames {
		out = append(out, figs[name])
	}
	return out, nil
}

// scaleStride spreads the samples' pipeline GETs over the loaded tasks (a prime, so they differ).
const scaleStride = 7919

// getPipelineTask is the API's GET of a finished pipeline task: the task (a final record asks
// Temporal nothing) and its steps.
func getPipelineTask(ctx context.Context, pipes *pipelinedb.Store, p scaleProject, i int) error {
	t, err := pipes.Follow(ctx, p.pipelineTaskID(i*scaleStride%p.size), func(context.Context) (*closure.Closure, error) {
		return nil, errors.New("a finished task's GET asked Temporal")
	})
	if err != nil {
		return err
	}
	steps, err := pipes.StepsOf(ctx, t)
	if err == nil && len(steps) != len(scalePipelineSteps) {
		err = fmt.Errorf("task %s has %d steps, want %d", t.ID, len(steps), len(scalePipelineSteps))
	}
	return err
}

// pipelinePage reads the first page of 50 of the pipeline tasks f matches, newest first, as the
// console does; every loaded task is the one user's, so the total is the size.
func pipelinePage(ctx context.Context, pipes *pipelinedb.Store, f pipelinedb.TaskFilter, size int) error {
	page, total, err := pipes.ListTasks(ctx, f, 0, 50)
	if err == nil && (len(page) != min(50, size) || total != int64(size)) {
		err = fmt.Errorf("page of %d pipeline tasks of %d, want 50 of %d", len(page), total, size)
	}
	return err
}

// confirmAll confirms every task of a pull as one batch and fails on any task it refused.
func confirmAll(ctx context.Context, svc *taskecho.Server, actor taskecho.Actor, projectID string, pulled *taskecho.PullResult) error {
	ids := make([]string, len(pulled.Tasks))
	for i, t := range pulled.Tasks {
		ids[i] = t.TaskID
	}
	items, err := svc.Leases.ConfirmBatch(ctx, actor, projectID, ids, pulled.LeaseID)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Err != nil {
			return fmt.Errorf("task %s: %w", it.TaskID, it.Err)
		}
	}
	return nil
}

// commandSummary is "find tasks ×1, update tasks ×1" for a sample's commands.
func commandSummary(c map[string]int) string {
	keys := slices.Sorted(maps.Keys(c))
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s ×%d", k, c[k])
	}
	return s
}
