package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/closure"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/crawl/crawldb"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
)

// scaleOpNames are the series' operations, in the order each sample runs them.
var scaleOpNames = []string{"taskecho pull (limit 50)", "taskecho confirm/batch (50)", "taskecho append",
	"taskecho task list page", "taskecho project stats", "pipeline task GET", "pipeline user's task page",
	"console pipeline tasks page", "entry task GET", "entry suspended list", "entry stats", "console entry page",
	"console taskecho project page", "crawl progress read"}

// scaleFigures is what one operation cost at one size over its samples.
type scaleFigures struct {
	op string
	// commands is each sample's MongoDB commands by "command collection"; a sample whose count
	// differs from the first's makes the operation's cost depend on something other than the size.
	commands []map[string]int
	lat      latencies
	// examined is the documents the first sample's commands examined, or why there is no count.
	examined string
	// failed are the samples whose call failed, with the error; lat and commands hold the others.
	failed []string
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

// byCommand is the first sample's commands as the Result's per-unit splits: MongoDB's by
// "command collection", Redis' by command and Temporal's calls by name.
func (f *scaleFigures) byCommand() (mongoBy, redisBy, temporalBy map[string]float64) {
	mongoBy, redisBy, temporalBy = map[string]float64{}, map[string]float64{}, map[string]float64{}
	for k, v := range f.commands[0] {
		switch {
		case strings.HasPrefix(k, "redis "):
			redisBy[strings.TrimPrefix(k, "redis ")] = float64(v)
		case strings.HasPrefix(k, "temporal "):
			temporalBy[strings.TrimPrefix(k, "temporal ")] = float64(v)
		default:
			mongoBy[k] = float64(v)
		}
	}
	return mongoBy, redisBy, temporalBy
}

// scaleDeps is what the series' operations run through: the app's database and its services,
// built as the API builds them.
type scaleDeps struct {
	svc      *taskecho.Server
	reader   *listing.Reader
	pipes    *pipelinedb.Store
	entry    *intake.Tasks
	crawl    *crawldb.Store
	progress *countscript.Store
	// explain counts documents examined; nil on the stand-in.
	explain *explainer
}

// newScaleDeps builds the services over db (and an explainer when it is a real MongoDB), Temporal tc (entry's describe and visibility, their
// calls counted) and rdb, which it hooks with redisTally (once per client: a second hook counts
// twice).
func newScaleDeps(ctx context.Context, db *mongo.Database, svc *taskecho.Server, tc client.Client, taskQueue string, rdb redis.UniversalClient, keyPrefix string) scaleDeps {
	rdb.AddHook(redisTally{})
	return scaleDeps{svc: svc, reader: listing.New(db, svc), pipes: pipelinedb.New(db), crawl: crawldb.New(db), progress: countscript.New(rdb, keyPrefix, time.Hour, time.Hour),
		explain: newExplainer(ctx, db),
		entry: &intake.Tasks{Runs: entrydb.New(db), Workflows: countedWorkflows{entrywf.NewClient(tc, taskQueue)},
			Visibility: countedVisibility{tc}}}
}

// measureScale runs samples rounds of every operation on a loaded project through d, counting
// each call's MongoDB and Redis commands and Temporal calls (withOpTally; the database's client must
// carry mongox.Monitor) and timing it. A round pulls 50 tasks, confirms them as one batch,
// appends a message to one finished task and reads every page and task the series lists; p must
// hold at least samples×50 pending tasks and samples finished ones.
func measureScale(ctx context.Context, d scaleDeps, p scaleProject, samples int) ([]*scaleFigures, error) {
	figs := make([]*scaleFigures, len(scaleOpNames))
	for i, name := range scaleOpNames {
		figs[i] = &scaleFigures{op: name}
	}
	for i := range samples {
		ops := scaleRound(d, p, i)
		for j, op := range ops {
			tctx, tally := withOpTally(ctx)
			t0 := time.Now()
			if err := op(tctx); err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("size %d, sample %d: %s: %w", p.size, i, scaleOpNames[j], err)
				}
				// A call that fails (the client's 15 s timeout on the stand-in) is a finding of
				// the size: the row counts it, and the round goes on.
				figs[j].failed = append(figs[j].failed, fmt.Sprintf("sample %d: %v", i, err))
				continue
			}
			figs[j].lat = append(figs[j].lat, time.Since(t0))
			figs[j].commands = append(figs[j].commands, tally.counts())
			if figs[j].examined == "" {
				figs[j].examined = notExamined
				if d.explain != nil {
					figs[j].examined = d.explain.examined(ctx, tally.mongo.Commands())
				}
			}
		}
	}
	return figs, nil
}

// scaleRound is sample i's operations, in scaleOpNames' order.
func scaleRound(d scaleDeps, p scaleProject, i int) []func(ctx context.Context) error {
	pipes, reader := d.pipes, d.reader
	actor := taskecho.Actor{Name: "bench-scale"}
	var pulled *taskecho.PullResult
	return []func(ctx context.Context) error{
		func(ctx context.Context) (err error) {
			pulled, err = d.svc.Leases.Pull(ctx, actor, taskecho.PullFilter{ProjectID: p.id, Limit: pullLimit})
			if err == nil && len(pulled.Tasks) != pullLimit {
				err = fmt.Errorf("handed out %d tasks, want %d", len(pulled.Tasks), pullLimit)
			}
			return err
		},
		func(ctx context.Context) error {
			if pulled == nil {
				return errors.New("the round's pull failed: nothing to confirm")
			}
			return confirmAll(ctx, d.svc, actor, p.id, pulled)
		},
		func(ctx context.Context) error {
			_, err := d.svc.Intake.AppendMessage(ctx, &taskecho.IncrementalInput{ProjectID: p.id,
				TaskID: fmt.Sprintf("t-%07d", p.pending+i), Role: "ASSISTANT", Content: "follow-up"})
			return err
		},
		func(ctx context.Context) error { return echoTaskPage(ctx, reader, p) },
		func(ctx context.Context) error {
			_, err := reader.Project(ctx, p.id)
			return err
		},
		func(ctx context.Context) error { return getPipelineTask(ctx, pipes, p, i) },
		func(ctx context.Context) error {
			return pipelinePage(ctx, pipes, pipelinedb.TaskFilter{UserID: p.pipelineUser()}, p.size)
		},
		func(ctx context.Context) error { return pipelinePage(ctx, pipes, pipelinedb.TaskFilter{}, p.size) },
		func(ctx context.Context) error { return getEntryTask(ctx, d, p, i) },
		func(ctx context.Context) error {
			_, err := d.entry.Suspended(ctx, entryListShown)
			return err
		},
		func(ctx context.Context) error {
			_, err := d.entry.Stats(ctx, 0)
			return err
		},
		func(ctx context.Context) error { return entryConsolePage(ctx, d) },
		func(ctx context.Context) error { return echoProjectPage(ctx, reader, p) },
		func(ctx context.Context) error { return readCrawlProgress(ctx, d, p, i) },
	}
}

// echoTaskPage reads the project's first page of 50 tasks with their total.
func echoTaskPage(ctx context.Context, reader *listing.Reader, p scaleProject) error {
	page, total, err := reader.Tasks(ctx, p.id, nil, listing.TaskQuery{Page: listing.Page{Page: 1, Size: 50}})
	if err == nil && (len(page) != 50 || total != int64(p.size)) {
		err = fmt.Errorf("page of %d tasks of %d, want 50 of %d", len(page), total, p.size)
	}
	return err
}

// echoProjectPage is what the console's project page reads (api/ui projectPage): the project's
// summary, its first page of queues and its first page of project-level tasks.
func echoProjectPage(ctx context.Context, reader *listing.Reader, p scaleProject) error {
	if _, err := reader.Project(ctx, p.id); err != nil {
		return err
	}
	if _, _, err := reader.Queues(ctx, p.id, listing.Page{Page: 1, Size: 50}, ""); err != nil {
		return err
	}
	return echoTaskPage(ctx, reader, p)
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
