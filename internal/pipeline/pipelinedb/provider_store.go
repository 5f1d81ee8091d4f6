package pipelinedb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// PutProvider creates or replaces a provider; a new provider starts healthy (`up`).
func (s *Store) PutProvider(ctx context.Context, p *pipeline.Provider) (*pipeline.Provider, error) {
	now := s.now()
	_, err := s.c(CollProviders).UpdateOne(ctx, bson.D{{Key: "_id", Value: p.Ref}}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "base_url", Value: p.BaseURL}, {Key: "health_url", Value: p.HealthURL},
			{Key: "auth_header", Value: p.AuthHeader}, {Key: "auth_value", Value: p.AuthValue}, {Key: "updated_at", Value: now}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "created_at", Value: now}}},
	}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return nil, fmt.Errorf("store provider %s: %w", p.Ref, err)
	}
	_, err = s.c(CollHealth).UpdateOne(ctx, bson.D{{Key: "_id", Value: p.Ref}}, bson.D{
		{Key: "$setOnInsert", Value: bson.D{{Key: "status", Value: pipeline.HealthUp}, {Key: "last_check_at", Value: now},
			{Key: "error_rate", Value: 0.0}, {Key: "avg_response_time", Value: 0}, {Key: "pinned", Value: false},
			{Key: "consecutive_failures", Value: 0}, {Key: "consecutive_successes", Value: 0}, {Key: "updated_at", Value: now}}},
	}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return nil, fmt.Errorf("create health of provider %s: %w", p.Ref, err)
	}
	return s.GetProvider(ctx, p.Ref)
}

// GetProvider loads one provider.
func (s *Store) GetProvider(ctx context.Context, ref string) (*pipeline.Provider, error) {
	var p pipeline.Provider
	if err := s.c(CollProviders).FindOne(ctx, bson.D{{Key: "_id", Value: ref}}).Decode(&p); err != nil {
		return nil, notFound(err, "provider "+ref)
	}
	return &p, nil
}

// ListProviders lists every provider by ref (a small, operator-managed set).
func (s *Store) ListProviders(ctx context.Context) ([]pipeline.Provider, error) {
	cur, err := s.c(CollProviders).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	var out []pipeline.Provider
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read providers: %w", err)
	}
	return out, nil
}

// PutFunction creates or replaces an SCF function.
func (s *Store) PutFunction(ctx context.Context, f *pipeline.Function) (*pipeline.Function, error) {
	now := s.now()
	_, err := s.c(CollFunctions).UpdateOne(ctx, bson.D{{Key: "_id", Value: f.Name}}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "invoke_url", Value: f.InvokeURL}, {Key: "updated_at", Value: now}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "created_at", Value: now}}},
	}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return nil, fmt.Errorf("store function %s: %w", f.Name, err)
	}
	return s.GetFunction(ctx, f.Name)
}

// GetFunction loads one function.
func (s *Store) GetFunction(ctx context.Context, name string) (*pipeline.Function, error) {
	var f pipeline.Function
	if err := s.c(CollFunctions).FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&f); err != nil {
		return nil, notFound(err, "function "+name)
	}
	return &f, nil
}

// ListFunctions lists every function by name.
func (s *Store) ListFunctions(ctx context.Context) ([]pipeline.Function, error) {
	cur, err := s.c(CollFunctions).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list functions: %w", err)
	}
	var out []pipeline.Function
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read functions: %w", err)
	}
	return out, nil
}

// Lookup returns the set of registered providers and functions for schema validation.
func (s *Store) Lookup(ctx context.Context) (pipeline.Lookup, error) {
	provs, err := s.ListProviders(ctx)
	if err != nil {
		return pipeline.Lookup{}, err
	}
	funcs, err := s.ListFunctions(ctx)
	if err != nil {
		return pipeline.Lookup{}, err
	}
	p, f := map[string]bool{}, map[string]bool{}
	for _, x := range provs {
		p[x.Ref] = true
	}
	for _, x := range funcs {
		f[x.Name] = true
	}
	return pipeline.Lookup{ProviderExists: func(r string) bool { return p[r] }, FunctionExists: func(n string) bool { return f[n] }}, nil
}
