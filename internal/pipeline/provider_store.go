package pipeline

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Provider health statuses of the seed's provider_health table.
const (
	HealthUp       = "up"
	HealthDown     = "down"
	HealthDegraded = "degraded"
)

// Provider is one providers document: where a provider_ref's API lives.
type Provider struct {
	Ref        string    `bson:"_id" json:"provider_ref"`
	BaseURL    string    `bson:"base_url" json:"base_url"`
	HealthURL  string    `bson:"health_url,omitempty" json:"health_url,omitempty"`
	AuthHeader string    `bson:"auth_header,omitempty" json:"auth_header,omitempty"`
	AuthValue  string    `bson:"auth_value,omitempty" json:"-"` // a credential: never returned by the API
	CreatedAt  time.Time `bson:"created_at" json:"created_at"`
	UpdatedAt  time.Time `bson:"updated_at" json:"updated_at"`
}

// Function is one functions document: where an scf_function is invoked.
type Function struct {
	Name      string    `bson:"_id" json:"name"`
	InvokeURL string    `bson:"invoke_url" json:"invoke_url"`
	CreatedAt time.Time `bson:"created_at" json:"created_at"`
	UpdatedAt time.Time `bson:"updated_at" json:"updated_at"`
}

// Health is one provider_health document. Pinned means an operator set the status by hand and
// the periodic check leaves the status alone until it is released.
type Health struct {
	ProviderRef          string    `bson:"_id" json:"provider_ref"`
	Status               string    `bson:"status" json:"status"`
	LastCheckAt          time.Time `bson:"last_check_at" json:"last_check_at"`
	ErrorRate            float64   `bson:"error_rate" json:"error_rate"`
	AvgResponseTime      int       `bson:"avg_response_time" json:"avg_response_time"`
	Pinned               bool      `bson:"pinned" json:"pinned"`
	ConsecutiveFailures  int       `bson:"consecutive_failures" json:"consecutive_failures"`
	ConsecutiveSuccesses int       `bson:"consecutive_successes" json:"consecutive_successes"`
	UpdatedAt            time.Time `bson:"updated_at" json:"updated_at"`
}

// PutProvider creates or replaces a provider; a new provider starts healthy (`up`).
func (s *Store) PutProvider(ctx context.Context, p *Provider) (*Provider, error) {
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
		{Key: "$setOnInsert", Value: bson.D{{Key: "status", Value: HealthUp}, {Key: "last_check_at", Value: now},
			{Key: "error_rate", Value: 0.0}, {Key: "avg_response_time", Value: 0}, {Key: "pinned", Value: false},
			{Key: "consecutive_failures", Value: 0}, {Key: "consecutive_successes", Value: 0}, {Key: "updated_at", Value: now}}},
	}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return nil, fmt.Errorf("create health of provider %s: %w", p.Ref, err)
	}
	return s.GetProvider(ctx, p.Ref)
}

// GetProvider loads one provider.
func (s *Store) GetProvider(ctx context.Context, ref string) (*Provider, error) {
	var p Provider
	if err := s.c(CollProviders).FindOne(ctx, bson.D{{Key: "_id", Value: ref}}).Decode(&p); err != nil {
		return nil, notFound(err, "provider "+ref)
	}
	return &p, nil
}

// ListProviders lists every provider by ref (a small, operator-managed set).
func (s *Store) ListProviders(ctx context.Context) ([]Provider, error) {
	cur, err := s.c(CollProviders).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	var out []Provider
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read providers: %w", err)
	}
	return out, nil
}

// PutFunction creates or replaces an SCF function.
func (s *Store) PutFunction(ctx context.Context, f *Function) (*Function, error) {
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
func (s *Store) GetFunction(ctx context.Context, name string) (*Function, error) {
	var f Function
	if err := s.c(CollFunctions).FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&f); err != nil {
		return nil, notFound(err, "function "+name)
	}
	return &f, nil
}

// ListFunctions lists every function by name.
func (s *Store) ListFunctions(ctx context.Context) ([]Function, error) {
	cur, err := s.c(CollFunctions).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list functions: %w", err)
	}
	var out []Function
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read functions: %w", err)
	}
	return out, nil
}

// Lookup returns the set of registered providers and functions for schema validation.
func (s *Store) Lookup(ctx context.Context) (Lookup, error) {
	provs, err := s.ListProviders(ctx)
	if err != nil {
		return Lookup{}, err
	}
	funcs, err := s.ListFunctions(ctx)
	if err != nil {
		return Lookup{}, err
	}
	p, f := map[string]bool{}, map[string]bool{}
	for _, x := range provs {
		p[x.Ref] = true
	}
	for _, x := range funcs {
		f[x.Name] = true
	}
	return Lookup{ProviderExists: func(r string) bool { return p[r] }, FunctionExists: func(n string) bool { return f[n] }}, nil
}
