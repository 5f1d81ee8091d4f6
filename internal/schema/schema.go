// Package schema creates the indexes of every collection taskloom owns, in one step with one
// failure policy. The API and the worker run it at start (AtStart), `starter migrate` on demand
// (Ensure); no subsystem creates its own indexes elsewhere.
package schema

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/entry/entrydb"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
	"github.com/taskloom/taskloom/internal/uisession"
)

// store is one owner of collections and the function that creates its indexes.
type store struct {
	name   string
	ensure func(context.Context) error
}

func stores(db *mongo.Database) []store {
	return []store{
		{"api keys", auth.NewStore(db).EnsureIndexes},
		{"pipeline", pipelinedb.New(db).EnsureIndexes},
		{"entry", entrydb.New(db).EnsureIndexes},
		{"echo", func(ctx context.Context) error { return taskechodb.EnsureIndexes(ctx, db) }},
		{"ui users", uisession.NewUsers(db).EnsureIndexes},
		{"ui sessions", uisession.NewSessions(db, uisession.DefaultLifetime).EnsureIndexes},
	}
}

// Ensure creates every store's indexes on db, one store after the other (FerretDB v1 drops the
// connection when index creations on one collection overlap), and returns every failure, named
// by its store. Creating an existing index is a no-op, so it may run any number of times.
func Ensure(ctx context.Context, db *mongo.Database) error {
	var errs []error
	for _, s := range stores(db) {
		if err := s.ensure(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s indexes: %w", s.name, err))
		}
	}
	return errors.Join(errs...)
}

// Timing of AtStart: each attempt's bound, and the pause between attempts while the database
// does not answer.
const (
	attemptTimeout = 30 * time.Second
	retryEvery     = 15 * time.Second
)

// AtStart is the one failure policy of the processes: ensure the indexes once before serving;
// when the database does not answer, start anyway (the API still serves /healthz), report the
// failure in the "schema" readiness check, and try again every retryEvery until it succeeds or
// ctx ends. A process never serves from a database it has not indexed while reporting ready.
// It runs once per platform (p.SchemaOnce): a process that is API and worker at once (the dev
// stack) does not create the same indexes twice at the same moment, which FerretDB v1 answers by
// dropping the connection.
func AtStart(ctx context.Context, p *platform.Platform) {
	p.SchemaOnce.Do(func() {
		p.AddCheck("schema", keep(ctx, func(ctx context.Context) error { return Ensure(ctx, p.Mongo) }, retryEvery, p.Log))
	})
}

// keep runs ensure once now and, while it fails, again every `every` in the background. The
// returned check reports the last failure, nil once ensure has succeeded.
func keep(ctx context.Context, ensure func(context.Context) error, every time.Duration, log *slog.Logger) func(context.Context) error {
	var mu sync.Mutex
	attempt := func() error {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		defer cancel()
		return ensure(actx)
	}
	last := attempt()
	check := func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if last != nil {
			return fmt.Errorf("indexes not ensured: %w", last)
		}
		return nil
	}
	if last == nil {
		return check
	}
	log.Warn("indexes not ensured; retrying in the background", "every", every, "err", last)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := attempt()
			mu.Lock()
			last = err
			mu.Unlock()
			if err == nil {
				log.Info("indexes ensured")
				return
			}
			log.Warn("indexes still not ensured", "err", err)
		}
	}()
	return check
}
