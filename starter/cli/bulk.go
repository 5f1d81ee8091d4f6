package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/taskloom/taskloom/internal/bulk"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/progressline"
)

// bulkFlags are the flags every bulk command shares: how to run the operation. (Each command
// adds its own filter flags.)
type bulkFlags struct {
	dryRun bool
	key    string
	rate   int
	wait   bool
}

// add declares the flags on fl, each help text after prefix (a command that does more than its
// bulk operation says which flags are the bulk one's).
func (f *bulkFlags) add(fl *pflag.FlagSet, prefix string) {
	fl.BoolVar(&f.dryRun, "dry-run", false, prefix+"print how many tasks the filter selects, and a sample, and change nothing")
	fl.StringVar(&f.key, "idempotency-key", "", "makes the command safe to repeat: the same key touches no task twice")
	fl.IntVar(&f.rate, "rate", bulk.DefaultBatchSize, prefix+"tasks per second")
	fl.BoolVar(&f.wait, "wait", true, prefix+"print the operation's progress until it finishes")
}

// checkKey refuses an --idempotency-key that could not name an operation.
func (f *bulkFlags) checkKey() error {
	if f.key == "" {
		return nil
	}
	if err := pipeline.CheckIdempotencyKey(f.key); err != nil {
		return fmt.Errorf("--idempotency-key: %w", err)
	}
	return nil
}

// bulkRun is one bulk operation as a command runs it.
type bulkRun[F, P any, O bulk.Outcome] struct {
	plan   *bulk.Plan[F, P, O]
	params P
	// would follows the dry run's count: "suspended tasks would be resumed".
	would string
	// label begins the progress line, before the operation's id.
	label string
	// applied names the progress's applied count: "applied", "redriven".
	applied string
}

// run runs the operation on requested as f says: a dry run prints the count and a sample;
// otherwise the operation starts (or is found, for a repeated key) and, with --wait, its
// progress is shown until it finishes, then its counts and every task's outcome as JSON.
func (r *bulkRun[F, P, O]) run(ctx context.Context, out io.Writer, requested F, f bulkFlags) error {
	if f.rate < 1 || f.rate > 100 {
		return fmt.Errorf("--rate: %d must be between 1 and 100", f.rate)
	}
	if f.dryRun {
		_, n, sample, err := r.plan.DryRun(ctx, requested, 10)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d %s\n", n, r.would)
		for _, id := range sample {
			fmt.Fprintln(out, id)
		}
		return nil
	}
	id := pipeline.NewTaskID()
	if f.key != "" {
		id = r.plan.Op.IDForKey(cliKeyScope, f.key)
	}
	started, _, err := r.plan.Start(ctx, id, requested, r.params, f.rate)
	if err != nil {
		return err
	}
	verb := "started"
	if !started {
		verb = "already started by an earlier run with this key"
	}
	fmt.Fprintf(out, "%s %s %s (workflow %s)\n", r.plan.Op.Noun, id, verb, r.plan.Op.WorkflowID(id))
	if !f.wait {
		return nil
	}
	p, err := r.follow(ctx, out, id)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(p.Outcomes)
}

// follow shows the operation's progress on a progress line, reading it every second, until it
// has finished; then it prints the counts and returns the last progress.
func (r *bulkRun[F, P, O]) follow(ctx context.Context, out io.Writer, id string) (*bulk.Progress[F, O], error) {
	line := progressline.New(out, 0, r.label+" "+id)
	defer line.Done()
	for {
		p, err := r.plan.Progress(ctx, id)
		if err != nil {
			return nil, err
		}
		line.SetTotal(int(p.Total))
		line.Set(p.Done)
		if p.Finished {
			line.Done()
			fmt.Fprintf(out, "%d/%d %s=%d skipped=%d errors=%d\n", p.Done, p.Total, r.applied, p.Applied, p.Skipped, p.Errors)
			return p, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// addTimeRange declares a bulk filter's inclusive time bounds on fl, --NAME-since and
// --NAME-until; help says what the bounds select ("only tasks suspended").
func addTimeRange(fl *pflag.FlagSet, since, until *string, name, help string) {
	fl.StringVar(since, name+"-since", "", help+" at or after this RFC 3339 time")
	fl.StringVar(until, name+"-until", "", help+" at or before this RFC 3339 time")
}

// timeRange parses the bounds addTimeRange declared under name; nil for one left out.
func timeRange(name, since, until string) (*time.Time, *time.Time, error) {
	from, err := cliTime("--"+name+"-since", since)
	if err != nil {
		return nil, nil, err
	}
	to, err := cliTime("--"+name+"-until", until)
	return from, to, err
}

// cliTime reads an RFC 3339 time flag; nil when it is not given.
func cliTime(flag, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", flag, v)
	}
	t = t.UTC()
	return &t, nil
}
