package pipelinedb

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// GetHealth loads the health of the given providers, keyed by ref; unknown refs are absent.
func (s *Store) GetHealth(ctx context.Context, refs []string) (map[string]pipeline.Health, error) {
	cur, err := s.c(CollHealth).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: refs}}}})
	if err != nil {
		return nil, fmt.Errorf("load provider health: %w", err)
	}
	var hs []pipeline.Health
	if err := cur.All(ctx, &hs); err != nil {
		return nil, fmt.Errorf("read provider health: %w", err)
	}
	out := make(map[string]pipeline.Health, len(hs))
	for _, h := range hs {
		out[h.ProviderRef] = h
	}
	return out, nil
}

// ListHealth lists every provider's health.
func (s *Store) ListHealth(ctx context.Context) ([]pipeline.Health, error) {
	cur, err := s.c(CollHealth).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list provider health: %w", err)
	}
	var hs []pipeline.Health
	if err := cur.All(ctx, &hs); err != nil {
		return nil, fmt.Errorf("read provider health: %w", err)
	}
	return hs, nil
}

// SetHealthManual sets a provider's status by hand and pins it; pinned=false hands the status
// back to the periodic check.
func (s *Store) SetHealthManual(ctx context.Context, ref, status string, pinned bool) (*pipeline.Health, error) {
	if _, err := s.GetProvider(ctx, ref); err != nil {
		return nil, err
	}
	now := s.now()
	set := bson.D{{Key: "pinned", Value: pinned}, {Key: "updated_at", Value: now}}
	if status != "" {
		set = append(set, bson.E{Key: "status", Value: status}, bson.E{Key: "consecutive_failures", Value: 0},
			bson.E{Key: "consecutive_successes", Value: 0})
	}
	_, err := s.c(CollHealth).UpdateOne(ctx, bson.D{{Key: "_id", Value: ref}}, bson.D{{Key: "$set", Value: set}},
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return nil, fmt.Errorf("set health of provider %s: %w", ref, err)
	}
	hs, err := s.GetHealth(ctx, []string{ref})
	if err != nil {
		return nil, err
	}
	h := hs[ref]
	return &h, nil
}

// SaveHealth writes the result of a periodic check. A pinned status is kept (only the measured
// numbers change), because an operator's decision outranks the probe.
func (s *Store) SaveHealth(ctx context.Context, h pipeline.Health) error {
	set := bson.D{{Key: "last_check_at", Value: h.LastCheckAt}, {Key: "error_rate", Value: h.ErrorRate},
		{Key: "avg_response_time", Value: h.AvgResponseTime}, {Key: "consecutive_failures", Value: h.ConsecutiveFailures},
		{Key: "consecutive_successes", Value: h.ConsecutiveSuccesses}, {Key: "updated_at", Value: s.now()}}
	if _, err := s.c(CollHealth).UpdateOne(ctx, bson.D{{Key: "_id", Value: h.ProviderRef}}, bson.D{{Key: "$set", Value: set}},
		options.UpdateOne().SetUpsert(true)); err != nil {
		return fmt.Errorf("save health of provider %s: %w", h.ProviderRef, err)
	}
	_, err := s.c(CollHealth).UpdateOne(ctx, bson.D{{Key: "_id", Value: h.ProviderRef}, {Key: "pinned", Value: bson.D{{Key: "$ne", Value: true}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: h.Status}}}})
	if err != nil {
		return fmt.Errorf("save status of provider %s: %w", h.ProviderRef, err)
	}
	return nil
}

// RecordCall appends one call to the log.
func (s *Store) RecordCall(ctx context.Context, c pipeline.ProviderCall) error {
	if _, err := s.c(CollCalls).InsertOne(ctx, c); err != nil {
		return fmt.Errorf("record call to %s: %w", c.ProviderRef, err)
	}
	return nil
}

// RecentCalls aggregates a provider's calls since `since`: the calls logged in provider_calls
// (failed attempts, async and SCF calls) and those a finished sync step keeps on its task_steps
// row (RecordStep). Two indexed finds; each reads at most limit calls, newest first.
func (s *Store) RecentCalls(ctx context.Context, ref string, since time.Time, limit int64) (pipeline.CallStats, error) {
	cur, err := s.c(CollCalls).Find(ctx,
		bson.D{{Key: "provider_ref", Value: ref}, {Key: "at", Value: bson.D{{Key: "$gte", Value: since}}}},
		options.Find().SetSort(bson.D{{Key: "at", Value: -1}}).SetLimit(limit))
	if err != nil {
		return pipeline.CallStats{}, fmt.Errorf("load calls of %s: %w", ref, err)
	}
	var calls []pipeline.ProviderCall
	if err := cur.All(ctx, &calls); err != nil {
		return pipeline.CallStats{}, fmt.Errorf("read calls of %s: %w", ref, err)
	}
	cur, err = s.c(CollSteps).Find(ctx,
		// The two conditions may match different calls of a row; the loop below keeps the right ones.
		bson.D{{Key: "calls.provider_ref", Value: ref}, {Key: "calls.at", Value: bson.D{{Key: "$gte", Value: since}}}},
		options.Find().SetLimit(limit).SetProjection(bson.D{{Key: "calls", Value: 1}}))
	if err != nil {
		return pipeline.CallStats{}, fmt.Errorf("load step calls of %s: %w", ref, err)
	}
	var steps []struct {
		Calls []pipeline.ProviderCall `bson:"calls"`
	}
	if err := cur.All(ctx, &steps); err != nil {
		return pipeline.CallStats{}, fmt.Errorf("read step calls of %s: %w", ref, err)
	}
	for _, st := range steps {
		for _, c := range st.Calls {
			if c.ProviderRef == ref && !c.At.Before(since) {
				calls = append(calls, c)
			}
		}
	}
	var st pipeline.CallStats
	var total int64
	for _, c := range calls {
		st.Calls++
		total += c.DurationMS
		if !c.OK {
			st.Failures++
		}
	}
	if st.Calls > 0 {
		st.AvgMS = int(total / int64(st.Calls))
	}
	return st, nil
}

// PruneCalls deletes calls older than before.
func (s *Store) PruneCalls(ctx context.Context, before time.Time) error {
	if _, err := s.c(CollCalls).DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: before}}}}); err != nil {
		return fmt.Errorf("prune provider calls: %w", err)
	}
	return nil
}

// SwapCircuit writes a provider's circuit breaker if it is still at version prev (the version its
// caller read; 0: never written): one updateOne guarded by circuit.version, so of two workers that
// read the same circuit only one changes it. It returns the written circuit, and false (no error)
// when another write got there first or the provider has no health document.
func (s *Store) SwapCircuit(ctx context.Context, ref string, prev int64, next pipeline.Circuit) (pipeline.Circuit, bool, error) {
	next.Version = prev + 1
	guard := bson.E{Key: "circuit.version", Value: prev}
	if prev == 0 {
		guard = bson.E{Key: "circuit.version", Value: nil} // null matches a missing field
	}
	res, err := s.c(CollHealth).UpdateOne(ctx, bson.D{{Key: "_id", Value: ref}, guard},
		bson.D{{Key: "$set", Value: bson.D{{Key: "circuit", Value: next}}}})
	if err != nil {
		return pipeline.Circuit{}, false, fmt.Errorf("swap circuit of provider %s: %w", ref, err)
	}
	return next, res.MatchedCount == 1, nil
}
