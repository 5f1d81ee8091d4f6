package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var testPolicy = BreakerPolicy{Threshold: 3, Cooldown: 10 * time.Second, CooldownMax: time.Minute, RateLimitWindow: 30 * time.Second}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fail(reason string) CallFailure { return CallFailure{Reason: reason} }

// failN records n ordinary failures one second apart from at.
func failN(t *testing.T, p BreakerPolicy, c Circuit, n int, at time.Time, f CallFailure) Circuit {
	t.Helper()
	for i := range n {
		next, changed := p.Failed(c, f, at.Add(time.Duration(i)*time.Second), "")
		if !changed {
			t.Fatalf("failure %d changed nothing: %+v", i+1, c)
		}
		c = next
	}
	return c
}

func admit(p BreakerPolicy, c Circuit, now time.Time) (Admission, time.Time) {
	return p.Admit(Health{Status: HealthUp, Circuit: c}, now)
}

// closed → open after Threshold failures; held during the cooldown; one probe after it; a probe
// that succeeds closes, one that fails opens again for twice as long.
func TestCircuitClosedOpenHalfOpenClosed(t *testing.T) {
	p := testPolicy
	c := failN(t, p, Circuit{}, 2, t0, fail("503"))
	if c.Current() != CircuitClosed || c.ConsecutiveFailures != 2 {
		t.Fatalf("after 2 failures: %+v", c)
	}
	if adm, _ := admit(p, c, t0.Add(2*time.Second)); adm != AdmitCall {
		t.Fatalf("closed breaker admits %v", adm)
	}
	opened := t0.Add(2 * time.Second)
	c, _ = p.Failed(c, fail("answered 503"), opened, "")
	if c.Current() != CircuitOpen || !c.CooldownUntil.Equal(opened.Add(10*time.Second)) || c.Opens != 1 {
		t.Fatalf("after 3 failures: %+v", c)
	}
	if !strings.Contains(c.Reason, "3 consecutive failures") || !strings.Contains(c.Reason, "answered 503") {
		t.Fatalf("reason %q", c.Reason)
	}
	if adm, until := admit(p, c, opened.Add(9*time.Second)); adm != AdmitHold || !until.Equal(c.CooldownUntil) {
		t.Fatalf("open breaker during its cooldown: %v until %v", adm, until)
	}
	// Failures of calls that went out on a stale view while open change nothing.
	if _, changed := p.Failed(c, fail("x"), opened.Add(time.Second), ""); changed {
		t.Fatal("a failure while open changed the breaker")
	}
	probeAt := opened.Add(10 * time.Second)
	if adm, _ := admit(p, c, probeAt); adm != AdmitProbe {
		t.Fatalf("after the cooldown: %v, want a probe", adm)
	}
	half := p.Claim(c, probeAt, "probe-1", 30*time.Second)
	if half.Current() != CircuitHalfOpen {
		t.Fatalf("claimed: %+v", half)
	}
	if adm, until := admit(p, half, probeAt.Add(time.Second)); adm != AdmitHold || !until.Equal(probeAt.Add(11*time.Second)) {
		t.Fatalf("while the probe is out: %v until %v (want a look one cooldown later)", adm, until)
	}
	if _, changed := p.Succeeded(half, "someone-else"); changed {
		t.Fatal("another call's success decided the probe")
	}
	closed, changed := p.Succeeded(half, "probe-1")
	if !changed || closed.Current() != CircuitClosed || closed.ConsecutiveFailures != 0 || closed.Opens != 0 || !closed.CooldownUntil.IsZero() {
		t.Fatalf("probe success: %+v", closed)
	}
	reopened, changed := p.Failed(half, fail("still 503"), probeAt.Add(time.Second), "probe-1")
	if !changed || reopened.Current() != CircuitOpen || reopened.Opens != 2 ||
		!reopened.CooldownUntil.Equal(probeAt.Add(time.Second+20*time.Second)) || !strings.HasPrefix(reopened.Reason, "half-open probe failed") {
		t.Fatalf("probe failure: %+v", reopened)
	}
}

// A success resets the count (one write); a success on a clean closed breaker writes nothing.
func TestCircuitSuccessResetsAndHappyPathWritesNothing(t *testing.T) {
	p := testPolicy
	if _, changed := p.Succeeded(Circuit{}, ""); changed {
		t.Fatal("a success on a fresh breaker needs no write")
	}
	c := failN(t, p, Circuit{}, 2, t0, fail("503"))
	c, changed := p.Succeeded(c, "")
	if !changed || c.ConsecutiveFailures != 0 || c.Current() != CircuitClosed {
		t.Fatalf("reset: %+v", c)
	}
	if _, changed := p.Succeeded(c, ""); changed {
		t.Fatal("a second success wrote again")
	}
	// After the reset it takes Threshold new failures to open.
	if c = failN(t, p, c, 2, t0, fail("503")); c.Current() != CircuitClosed {
		t.Fatalf("opened early: %+v", c)
	}
}

// Each failed probe doubles the cooldown, never beyond CooldownMax.
func TestCircuitCooldownIsExponentialAndCapped(t *testing.T) {
	p := testPolicy
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for n, w := range want {
		if got := p.CooldownFor(n + 1); got != w {
			t.Errorf("opening %d: cooldown %s, want %s", n+1, got, w)
		}
	}
	c := failN(t, p, Circuit{}, 3, t0, fail("503"))
	var now time.Time
	for n := range 5 {
		now = c.CooldownUntil
		c = p.Claim(c, now, "p", time.Minute)
		c, _ = p.Failed(c, fail("503"), now, "p")
		if got := c.CooldownUntil.Sub(now); got != want[min(n+1, len(want)-1)] {
			t.Fatalf("after failed probe %d: cooldown %s, want %s", n+1, got, want[min(n+1, len(want)-1)])
		}
	}
	if p.CooldownFor(1000) != time.Minute {
		t.Fatal("a long series overflowed the cap")
	}
}

// A Retry-After longer than the cooldown is the floor, on opening, on a failed probe and while
// open.
func TestCircuitRetryAfterIsTheFloor(t *testing.T) {
	p := testPolicy
	c := failN(t, p, Circuit{}, 2, t0, fail("503"))
	at := t0.Add(2 * time.Second)
	c, _ = p.Failed(c, CallFailure{Reason: "503", RetryAfter: 90 * time.Second}, at, "")
	if got := c.CooldownUntil.Sub(at); got != 90*time.Second {
		t.Fatalf("opened for %s, want the vendor's Retry-After of 90s", got)
	}
	// A shorter Retry-After does not shorten anything.
	short, _ := p.Failed(Circuit{}, fail("503"), t0, "")
	short = failN(t, p, short, 1, t0, fail("503"))
	short, _ = p.Failed(short, CallFailure{Reason: "503", RetryAfter: time.Second}, t0, "")
	if got := short.CooldownUntil.Sub(t0); got != 10*time.Second {
		t.Fatalf("opened for %s, want the 10s cooldown", got)
	}
	// While open, a call that went out anyway and came back with a longer Retry-After extends it.
	ext, changed := p.Failed(short, CallFailure{Reason: "503", RetryAfter: 2 * time.Minute}, t0.Add(time.Second), "")
	if !changed || !ext.CooldownUntil.Equal(t0.Add(time.Second+2*time.Minute)) {
		t.Fatalf("while open: %+v", ext)
	}
	// A failed probe with a Retry-After beyond the doubled cooldown.
	half := p.Claim(short, short.CooldownUntil, "p", time.Minute)
	re, _ := p.Failed(half, CallFailure{Reason: "429", RateLimited: true, RetryAfter: 5 * time.Minute}, short.CooldownUntil, "p")
	if got := re.CooldownUntil.Sub(short.CooldownUntil); got != 5*time.Minute {
		t.Fatalf("probe failure opened for %s, want the Retry-After of 5m", got)
	}
}

// 429s alone open the breaker only once they have lasted RateLimitWindow; one other failure in the
// run makes it an ordinary run.
func TestCircuitRateLimitOpensOnlyWhenItPersists(t *testing.T) {
	p := testPolicy
	limited := CallFailure{Reason: "answered 429", RateLimited: true}
	c := failN(t, p, Circuit{}, 10, t0, limited) // 10 × 429 within 9 s
	if c.Current() != CircuitClosed || c.ConsecutiveFailures != 10 {
		t.Fatalf("429s within the window opened it: %+v", c)
	}
	c, _ = p.Failed(c, limited, t0.Add(30*time.Second), "")
	if c.Current() != CircuitOpen || !strings.Contains(c.Reason, "rate limited (429) for 30s") {
		t.Fatalf("429s for 30s: %+v", c)
	}
	mixed := failN(t, p, Circuit{}, 2, t0, limited)
	if mixed, _ = p.Failed(mixed, fail("answered 503"), t0.Add(2*time.Second), ""); mixed.Current() != CircuitOpen {
		t.Fatalf("a 503 after two 429s: %+v", mixed)
	}
	// Fewer than Threshold 429s never open, however long they last.
	few := failN(t, p, Circuit{}, 1, t0, limited)
	if few, _ = p.Failed(few, limited, t0.Add(time.Hour), ""); few.Current() != CircuitClosed {
		t.Fatalf("two 429s an hour apart: %+v", few)
	}
}

// A pin (up, degraded or down) wins: the breaker never holds a pinned provider. A zero Threshold
// turns the breaker off.
func TestCircuitPinWinsAndZeroThresholdIsOff(t *testing.T) {
	p := testPolicy
	open := failN(t, p, Circuit{}, 3, t0, fail("503"))
	for _, status := range []string{HealthUp, HealthDegraded, HealthDown} {
		if adm, _ := p.Admit(Health{Status: status, Pinned: true, Circuit: open}, t0.Add(4*time.Second)); adm != AdmitCall {
			t.Errorf("pinned %s: %v", status, adm)
		}
	}
	if adm, _ := p.Admit(Health{Status: HealthUp, Circuit: open}, t0.Add(4*time.Second)); adm != AdmitHold {
		t.Fatalf("auto: %v", adm)
	}
	if adm, _ := (BreakerPolicy{}).Admit(Health{Status: HealthUp, Circuit: open}, t0.Add(4*time.Second)); adm != AdmitCall {
		t.Fatalf("threshold 0: %v", adm)
	}
}

// A probe whose worker died loses its claim when the lease lapses; one that ended without an
// answer (cancelled) hands the probe back at once.
func TestCircuitProbeLeaseAndRelease(t *testing.T) {
	p := testPolicy
	c := failN(t, p, Circuit{}, 3, t0, fail("503"))
	half := p.Claim(c, c.CooldownUntil, "p", 30*time.Second)
	if adm, _ := admit(p, half, c.CooldownUntil.Add(31*time.Second)); adm != AdmitProbe {
		t.Fatalf("after the lease: %v", adm)
	}
	if _, changed := p.Released(half, "other"); changed {
		t.Fatal("another call released the probe")
	}
	back, changed := p.Released(half, "p")
	if !changed || back.Current() != CircuitOpen || back.Opens != c.Opens {
		t.Fatalf("released: %+v", back)
	}
	if adm, _ := admit(p, back, c.CooldownUntil.Add(time.Second)); adm != AdmitProbe {
		t.Fatalf("after a release: %v", adm)
	}
}

// The API shows state, cooldown_until, reason and consecutive_failures; a breaker that never
// tripped is closed.
func TestCircuitJSON(t *testing.T) {
	raw, err := json.Marshal(Health{ProviderRef: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"circuit":{"state":"closed","cooldown_until":null,"consecutive_failures":0}`) {
		t.Fatalf("fresh: %s", raw)
	}
	open := failN(t, testPolicy, Circuit{}, 3, t0, fail("503"))
	raw, _ = json.Marshal(open)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m["state"] != "open" || m["cooldown_until"] != "2026-01-02T03:04:17Z" || m["consecutive_failures"] != 3.0 || m["reason"] == nil || len(m) != 4 {
		t.Fatalf("open: %s", raw)
	}
}
