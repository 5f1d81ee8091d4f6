package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// The circuit breaker per provider (docs/pipelines.md "Circuit breaker"). The calls that start vendor work, a
// sync call and an async submit, go through guardedPost: it asks the provider's breaker before
// calling and records the outcome after. Status polls of a submitted job are neither held back
// (the job is paid for and may still finish) nor counted. The breaker lives in the provider's
// provider_health document; a worker reads it through the provider cache, so a closed breaker
// and a successful call cost no MongoDB command: only a change of state is written.

const (
	// swapAttempts bounds the compare-and-swap rounds of one breaker change under contention.
	swapAttempts = 5
	// defaultProbeLease bounds a half-open probe claimed by a call without a deadline.
	defaultProbeLease = time.Minute
	// contendedHold is how long a call that lost every round to other workers stays held.
	contendedHold = time.Second
	// breakerWriteTimeout bounds recording an outcome, which runs even when the activity was cancelled.
	breakerWriteTimeout = 5 * time.Second
	// statusTooManyRequests is HTTP 429 (not net/http's constant: the workflows link this package
	// for the activity names, and must not reach a network package).
	statusTooManyRequests = 429
)

// guardedPost is Vendors.Post behind the provider's circuit breaker.
func (a *Activities) guardedPost(ctx context.Context, p *pipeline.Provider, url string, body any, idemKey string) (any, error) {
	if a.Breaker.Threshold <= 0 {
		return a.Vendors.Post(ctx, p, url, body, idemKey)
	}
	h, probeID, err := a.admit(ctx, p.Ref)
	if err != nil {
		return nil, err
	}
	resp, err := a.Vendors.Post(ctx, p, url, body, idemKey)
	return resp, a.recordOutcome(ctx, p.Ref, h, probeID, err)
}

// admit lets a call out, or refuses it with an ErrTypeCircuitOpen error. It returns the view of
// the provider's health it decided on (nil: the provider has no health document, so no breaker)
// and the call's probe claim when the call is the half-open probe. A refusal is never decided on a
// cached view: the document is read again first.
func (a *Activities) admit(ctx context.Context, ref string) (h *pipeline.Health, probeID string, err error) {
	h, fresh, err := a.healths.get(ctx, ref, a.loadHealth)
	if err != nil {
		return nil, "", err
	}
	for range swapAttempts {
		if h == nil {
			return nil, "", nil // the provider choice skips a provider without health anyway
		}
		now := time.Now().UTC()
		adm, until := a.Breaker.Admit(*h, now)
		if adm != pipeline.AdmitCall && !fresh {
			if h, err = a.reloadHealth(ctx, ref); err != nil {
				return nil, "", err
			}
			fresh = true
			continue
		}
		switch adm {
		case pipeline.AdmitCall:
			return h, "", nil
		case pipeline.AdmitHold:
			return nil, "", circuitOpenError(h.Circuit, until, nil)
		}
		id := newProbeID()
		c, won, err := a.Store.SwapCircuit(ctx, ref, h.Circuit.Version, a.Breaker.Claim(h.Circuit, now, id, probeLease(ctx, now)))
		if err != nil {
			return nil, "", err
		}
		if won {
			claimed := a.remember(ref, *h, c)
			return &claimed, id, nil
		}
		if h, err = a.reloadHealth(ctx, ref); err != nil {
			return nil, "", err
		}
	}
	return nil, "", circuitOpenError(h.Circuit, time.Now().UTC().Add(contendedHold), nil)
}

// recordOutcome applies the call's outcome to the breaker, starting from h, the view admit decided
// on (so a long call does not read the document again when nothing changes). It returns the error
// the activity ends with: the call's own, or, when the breaker now holds the provider (this
// failure opened it, or another worker's did), an ErrTypeCircuitOpen error wrapping it, so the
// same call is not retried into an open breaker. A failed write is logged, never the call's
// failure: a vendor call that succeeded must not be sent again because the bookkeeping blinked.
func (a *Activities) recordOutcome(ctx context.Context, ref string, h *pipeline.Health, probeID string, callErr error) error {
	outcome, failure := classifyCall(callErr)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), breakerWriteTimeout)
	defer cancel()
	var err error
	for range swapAttempts {
		if err != nil || h == nil {
			break
		}
		now := time.Now().UTC()
		next, changed := a.transition(h.Circuit, outcome, failure, now, probeID)
		if !changed {
			return a.held(*h, now, outcome, callErr)
		}
		c, won, serr := a.Store.SwapCircuit(ctx, ref, h.Circuit.Version, next)
		if serr != nil {
			err = serr
			break
		}
		if won {
			return a.held(a.remember(ref, *h, c), now, outcome, callErr)
		}
		h, err = a.reloadHealth(ctx, ref)
	}
	if err != nil && a.Log != nil {
		a.Log.Warn("record circuit breaker outcome", "provider", ref, "err", err)
	}
	return callErr
}

// transition is the breaker's next state after one outcome.
func (a *Activities) transition(c pipeline.Circuit, o callOutcome, f pipeline.CallFailure, now time.Time, probeID string) (pipeline.Circuit, bool) {
	switch o {
	case outcomeAnswered:
		return a.Breaker.Succeeded(c, probeID)
	case outcomeFailed:
		return a.Breaker.Failed(c, f, now, probeID)
	}
	return a.Breaker.Released(c, probeID)
}

// held turns a counted failure into an ErrTypeCircuitOpen error when the breaker (as h shows it)
// now holds the provider.
func (a *Activities) held(h pipeline.Health, now time.Time, o callOutcome, callErr error) error {
	if o != outcomeFailed {
		return callErr
	}
	if adm, until := a.Breaker.Admit(h, now); adm == pipeline.AdmitHold {
		return circuitOpenError(h.Circuit, until, callErr)
	}
	return callErr
}

// remember caches h with circuit c (just written) and exports its state; it returns the new h.
func (a *Activities) remember(ref string, h pipeline.Health, c pipeline.Circuit) pipeline.Health {
	h.Circuit = c
	a.healths.put(ref, &h)
	a.Metrics.CircuitState(ref, c.Current())
	return h
}

func (a *Activities) loadHealth(ctx context.Context, ref string) (*pipeline.Health, error) {
	hs, err := a.Store.GetHealth(ctx, []string{ref})
	if err != nil {
		return nil, err
	}
	if h, ok := hs[ref]; ok {
		return &h, nil
	}
	return nil, nil
}

// reloadHealth reads the document again (another worker changed it) and caches it.
func (a *Activities) reloadHealth(ctx context.Context, ref string) (*pipeline.Health, error) {
	h, err := a.loadHealth(ctx, ref)
	if err != nil {
		return nil, err
	}
	a.healths.put(ref, h)
	return h, nil
}

// callOutcome is what a vendor call tells the breaker.
type callOutcome int

const (
	// outcomeNone: nothing about the vendor (the call was cancelled, or failed on our side).
	outcomeNone callOutcome = iota
	// outcomeAnswered: the vendor answered, with a success or by refusing the request (hard 4xx).
	outcomeAnswered
	// outcomeFailed: a transient or ambiguous failure, which the breaker counts.
	outcomeFailed
)

// classifyCall sorts a vendor call's error by the error classes (pipeline.ClassifyStatus): the
// HTTP status the vendor client attaches (pipeline.VendorAnswer) when there is one, else the
// activity error's type; an error that is not an activity error is a transport failure.
func classifyCall(err error) (callOutcome, pipeline.CallFailure) {
	if err == nil {
		return outcomeAnswered, pipeline.CallFailure{}
	}
	if errors.Is(err, context.Canceled) {
		return outcomeNone, pipeline.CallFailure{}
	}
	failed := pipeline.CallFailure{Reason: shortReason(err)}
	var va pipeline.VendorAnswer
	if errors.As(err, &va) {
		code := va.HTTPStatus()
		if code != 0 && pipeline.ClassifyStatus(code) == pipeline.ClassHard {
			return outcomeAnswered, pipeline.CallFailure{}
		}
		failed.RateLimited, failed.RetryAfter = code == statusTooManyRequests, va.RetryAfter()
		return outcomeFailed, failed
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		switch {
		case ae.Type() == pipeline.ErrTypeVendorRejected:
			return outcomeAnswered, pipeline.CallFailure{}
		case ae.NonRetryable(), ae.Type() == pipeline.ErrTypeRender, ae.Type() == pipeline.ErrTypeConfig:
			return outcomeNone, pipeline.CallFailure{}
		}
	}
	return outcomeFailed, failed
}

// shortReason is the error's own message, bounded for the provider_health document.
func shortReason(err error) string {
	msg := err.Error()
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		msg = ae.Message()
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

func circuitOpenError(c pipeline.Circuit, until time.Time, cause error) error {
	msg := fmt.Sprintf("circuit %s until %s", c.Current(), until.UTC().Format(time.RFC3339))
	if c.Reason != "" {
		msg += " (" + c.Reason + ")"
	}
	return temporal.NewNonRetryableApplicationError(msg, pipeline.ErrTypeCircuitOpen, cause, until)
}

// probeLease is how long a half-open probe claim holds: until the call's deadline.
func probeLease(ctx context.Context, now time.Time) time.Duration {
	if dl, ok := ctx.Deadline(); ok && dl.After(now) {
		return dl.Sub(now) + time.Second
	}
	return defaultProbeLease
}

func newProbeID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
