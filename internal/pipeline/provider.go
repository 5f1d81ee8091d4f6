package pipeline

import (
	"context"
	"sync"
	"time"
)

// Provider health statuses, as provider_health stores them.
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
// the periodic check leaves the status alone until it is released; a pin also overrides the
// circuit breaker (Circuit), which the calls themselves drive.
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
	Circuit              Circuit   `bson:"circuit,omitempty" json:"circuit"`
}

// ProviderCall is one recorded vendor call; the health check derives error_rate and
// avg_response_time from the recent ones.
type ProviderCall struct {
	ProviderRef string    `bson:"provider_ref"`
	At          time.Time `bson:"at"`
	OK          bool      `bson:"ok"`
	DurationMS  int64     `bson:"duration_ms"`
}

// CallStats summarises a provider's calls since a time, reading at most limit calls (newest
// first) so a busy provider cannot make the check slow.
type CallStats struct {
	Calls, Failures int
	AvgMS           int
}

// CallLog collects the vendor calls made under a context (WithCallLog), so that their caller can
// record them in the write it makes anyway instead of one provider_calls insert per call.
type CallLog struct {
	mu    sync.Mutex
	calls []ProviderCall
}

type callLogKey struct{}

// WithCallLog returns a context whose vendor calls go to the returned log.
func WithCallLog(ctx context.Context) (context.Context, *CallLog) {
	l := &CallLog{}
	return context.WithValue(ctx, callLogKey{}, l), l
}

// LogCall adds c to the context's call log; false when the context has none.
func LogCall(ctx context.Context, c ProviderCall) bool {
	l, ok := ctx.Value(callLogKey{}).(*CallLog)
	if !ok || l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
	return true
}

// Take returns the logged calls and empties the log.
func (l *CallLog) Take() []ProviderCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	return out
}
