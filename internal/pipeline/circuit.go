package pipeline

import (
	"encoding/json"
	"fmt"
	"time"
)

// Circuit breaker states, as provider_health.circuit.state stores them (an absent circuit is
// closed).
const (
	CircuitClosed   = "closed"
	CircuitOpen     = "open"
	CircuitHalfOpen = "half_open"
)

// ErrTypeCircuitOpen: the provider's circuit breaker holds it (open, or another worker's half-open
// probe is in flight), so the call was not made; or the failure just returned opened it, so the
// same call is not retried. The workflow skips the provider and, when no candidate is left, waits
// for the earliest cooldown to end within the step's time.
const ErrTypeCircuitOpen = "PipelineCircuitOpen"

// Circuit is a provider's circuit breaker, the `circuit` field of its provider_health document, so
// every worker and API replica sees the same one. Every change is a compare-and-swap on Version
// (pipelinedb.Store.SwapCircuit): two workers cannot both open it, nor both take the half-open
// probe. docs/pipelines.md "Circuit breaker" describes the rules.
type Circuit struct {
	State               string    `bson:"state,omitempty"`
	ConsecutiveFailures int       `bson:"consecutive_failures,omitempty"`
	CooldownUntil       time.Time `bson:"cooldown_until,omitempty"`
	Reason              string    `bson:"reason,omitempty"`
	// Opens counts the openings since the breaker was last closed: the exponent of the cooldown.
	Opens int `bson:"opens,omitempty"`
	// FailingSince is when the current run of failures began; RateLimitedOnly says every failure
	// of the run was a 429 (which opens the breaker only once it has lasted RateLimitWindow).
	FailingSince    time.Time `bson:"failing_since,omitempty"`
	RateLimitedOnly bool      `bson:"rate_limited_only,omitempty"`
	// ProbeID names the call that holds the half-open probe, until ProbeUntil (its lease: a worker
	// that dies mid-probe does not keep the provider half-open for ever).
	ProbeID    string    `bson:"probe_id,omitempty"`
	ProbeUntil time.Time `bson:"probe_until,omitempty"`
	// Version is the compare-and-swap guard, incremented by every write.
	Version int64 `bson:"version,omitempty"`
}

// Current is the state, closed for a breaker that never tripped.
func (c Circuit) Current() string {
	if c.State == "" {
		return CircuitClosed
	}
	return c.State
}

// MarshalJSON is what the API shows: state, cooldown_until (while open), reason and
// consecutive_failures; the guard and the probe's lease stay inside.
func (c Circuit) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		State               string     `json:"state"`
		CooldownUntil       *time.Time `json:"cooldown_until"`
		Reason              string     `json:"reason,omitempty"`
		ConsecutiveFailures int        `json:"consecutive_failures"`
	}{c.Current(), timeOrNil(c.CooldownUntil), c.Reason, c.ConsecutiveFailures})
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// BreakerPolicy is the breaker's settings (PIPELINE_BREAKER_*). A zero Threshold turns it off.
type BreakerPolicy struct {
	// Threshold consecutive counted failures open the breaker.
	Threshold int
	// Cooldown is the first open period; each failed half-open probe doubles it, up to CooldownMax.
	Cooldown, CooldownMax time.Duration
	// RateLimitWindow: a run of failures that are all 429 opens the breaker only when it has lasted
	// this long (a vendor's "not now" is paced by Retry-After, not punished).
	RateLimitWindow time.Duration
}

// VendorAnswer is what the breaker reads from a failed vendor call beyond its error type: the
// vendor client's errors implement it, as the cause of the activity error (errors.As finds it).
type VendorAnswer interface {
	// HTTPStatus is the status the vendor answered; 0 when no answer came (refused, reset,
	// timed out).
	HTTPStatus() int
	// RetryAfter is the vendor's Retry-After; 0 when it sent none.
	RetryAfter() time.Duration
}

// CallFailure is a failed vendor call the breaker counts (a transient or ambiguous one).
type CallFailure struct {
	RateLimited bool          // the vendor answered 429
	RetryAfter  time.Duration // the vendor's Retry-After; 0 when it sent none
	Reason      string
}

// Admission is the breaker's answer before a call that starts work.
type Admission int

const (
	// AdmitCall: the breaker is closed (or off, or the provider is pinned): call.
	AdmitCall Admission = iota
	// AdmitProbe: the cooldown is over; call as the one half-open probe, after claiming it.
	AdmitProbe
	// AdmitHold: open, or another call holds the probe: do not call before the time returned.
	AdmitHold
)

// Admit decides whether a call to the provider of h may go out at now, and until when it is held.
// A pin (an operator's up, degraded or down) wins over the breaker: a pinned provider is never
// held by it (a pinned-down one is not chosen at all).
func (p BreakerPolicy) Admit(h Health, now time.Time) (Admission, time.Time) {
	c := h.Circuit
	if p.Threshold <= 0 || h.Pinned {
		return AdmitCall, time.Time{}
	}
	switch c.Current() {
	case CircuitOpen:
		if now.Before(c.CooldownUntil) {
			return AdmitHold, c.CooldownUntil
		}
		return AdmitProbe, time.Time{}
	case CircuitHalfOpen:
		if now.Before(c.ProbeUntil) {
			// The probe may end long before its lease: look again after one base cooldown.
			return AdmitHold, minTime(c.ProbeUntil, now.Add(p.Cooldown))
		}
		return AdmitProbe, time.Time{} // the probe's lease lapsed: its worker is gone
	}
	return AdmitCall, time.Time{}
}

// Claim is c with the half-open probe taken by probeID until now+lease.
func (p BreakerPolicy) Claim(c Circuit, now time.Time, probeID string, lease time.Duration) Circuit {
	c.State, c.ProbeID, c.ProbeUntil = CircuitHalfOpen, probeID, now.Add(lease)
	return c
}

// Released is c after the probe probeID ended without an answer either way (the call was
// cancelled, or never sent): open again with its cooldown over, so the next call probes.
func (p BreakerPolicy) Released(c Circuit, probeID string) (Circuit, bool) {
	if c.Current() != CircuitHalfOpen || probeID == "" || c.ProbeID != probeID {
		return c, false
	}
	c.State, c.ProbeID, c.ProbeUntil = CircuitOpen, "", time.Time{}
	return c, true
}

// Succeeded is c after a call the vendor answered (a success, or a refusal of the request, which
// shows the vendor is up). probeID is the call's probe claim ("" for an ordinary call). The bool
// says whether anything changed: a closed breaker without failures needs no write.
func (p BreakerPolicy) Succeeded(c Circuit, probeID string) (Circuit, bool) {
	switch {
	case c.Current() == CircuitClosed && c.ConsecutiveFailures == 0:
		return c, false
	case c.Current() == CircuitClosed, c.Current() == CircuitHalfOpen && probeID != "" && c.ProbeID == probeID:
		return Circuit{State: CircuitClosed, Version: c.Version}, true
	}
	// Open, or another call's probe: only the probe decides.
	return c, false
}

// Failed is c after a counted failure at now. probeID is the call's probe claim ("" for an
// ordinary call). The bool says whether anything changed.
func (p BreakerPolicy) Failed(c Circuit, f CallFailure, now time.Time, probeID string) (Circuit, bool) {
	switch c.Current() {
	case CircuitClosed:
		if c.ConsecutiveFailures == 0 {
			c.FailingSince, c.RateLimitedOnly = now, f.RateLimited
		} else {
			c.RateLimitedOnly = c.RateLimitedOnly && f.RateLimited
		}
		c.ConsecutiveFailures++
		c.Reason = f.Reason
		if c.ConsecutiveFailures < p.Threshold || c.RateLimitedOnly && now.Sub(c.FailingSince) < p.RateLimitWindow {
			return c, true
		}
		c.Reason = fmt.Sprintf("%d consecutive failures, the last: %s", c.ConsecutiveFailures, f.Reason)
		if c.RateLimitedOnly {
			c.Reason = fmt.Sprintf("rate limited (429) for %s, the last: %s", now.Sub(c.FailingSince).Round(time.Second), f.Reason)
		}
		return p.open(c, now, f.RetryAfter), true
	case CircuitHalfOpen:
		if probeID == "" || c.ProbeID != probeID {
			return c, false
		}
		c.ConsecutiveFailures++
		c.Reason = "half-open probe failed: " + f.Reason
		return p.open(c, now, f.RetryAfter), true
	}
	// Open: a call that went out on a stale view adds nothing, except a longer Retry-After.
	if until := now.Add(f.RetryAfter); until.After(c.CooldownUntil) {
		c.CooldownUntil = until
		return c, true
	}
	return c, false
}

// open is c opened at now for the next cooldown of the series, never shorter than retryAfter.
func (p BreakerPolicy) open(c Circuit, now time.Time, retryAfter time.Duration) Circuit {
	c.Opens++
	c.State, c.ProbeID, c.ProbeUntil = CircuitOpen, "", time.Time{}
	c.CooldownUntil = now.Add(max(p.CooldownFor(c.Opens), retryAfter))
	return c
}

// CooldownFor is the open period of the n-th opening in a row (n ≥ 1): Cooldown doubled n-1 times,
// at most CooldownMax.
func (p BreakerPolicy) CooldownFor(n int) time.Duration {
	d := p.Cooldown
	for i := 1; i < n && d < p.CooldownMax; i++ {
		d *= 2
	}
	return min(d, max(p.CooldownMax, p.Cooldown))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
